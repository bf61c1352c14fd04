package netshell

import "github.com/vigil-kv/vigil/internal/resp"

// Replies is a client's CLIENT REPLY state over its reply buffer, emulated
// as Redis does it: prepareClientToWrite refuses every reply written while
// OFF or SKIP is set, except pub/sub pushes (CLIENT_PUSHING: SUBSCRIBE's
// confirmations, messages); CLIENT REPLY and RESET change the flags in the
// middle of a command; resetClient clears SKIP and turns SKIP_NEXT into
// SKIP after each top-level command, so a command refused before it runs
// counts as the skipped one. The binaries write replies first and drop
// them after: the reply since Seg is dropped, its pushes kept, when a
// segment written under suppression ends, that is when the flags change
// (Set) or the command ends (End).
type Replies struct {
	Flags  ReplyFlags
	Seg    int      // where the reply written under the current flags starts
	Pushes [][2]int // pushes in the reply buffer that suppression keeps
}

// Start marks the start of a top-level command's reply.
func (r *Replies) Start(w *resp.Writer) { r.Seg = len(w.B) }

// Pushed records a push written to w from start on: kept if its segment
// is dropped.
func (r *Replies) Pushed(w *resp.Writer, start int) {
	if r.Flags.Suppressing() {
		r.Pushes = append(r.Pushes, [2]int{start, len(w.B)})
	}
}

// Drop discards the reply written from mark on, except the pushes.
func (r *Replies) Drop(w *resp.Writer, mark int) {
	out := mark
	for _, sp := range r.Pushes {
		if sp[0] < mark || sp[1] > len(w.B) {
			continue
		}
		out += copy(w.B[out:], w.B[sp[0]:sp[1]])
	}
	w.B = w.B[:out]
	r.Pushes = r.Pushes[:0]
}

// Set changes the flags (CLIENT REPLY, RESET): the reply written before,
// under the old flags, is settled first.
func (r *Replies) Set(w *resp.Writer, f ReplyFlags) {
	if r.Flags.Suppressing() {
		r.Drop(w, r.Seg)
	}
	r.Flags = f
	r.Seg = len(w.B)
}

// End settles a top-level command's reply and moves SKIP on.
func (r *Replies) End(w *resp.Writer) {
	if r.Flags.Suppressing() {
		r.Drop(w, r.Seg)
	}
	r.Flags = r.Flags.Next()
}
