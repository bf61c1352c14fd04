package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/mattn/go-isatty"
)

// progressMin is the file size from which the checkers draw a progress
// bar (on a terminal only).
const progressMin = 16 << 20

// progressReader counts the bytes read through it and, when bar is set,
// redraws a one-line bar on it each time another percent is done.
type progressReader struct {
	r     io.Reader
	n     int64
	size  int64
	bar   io.Writer
	shown int
}

// newProgress wraps r; the bar goes to stderr when stderr is a terminal
// and the file is at least progressMin bytes, nowhere otherwise.
func newProgress(r io.Reader, size int64, name string) *progressReader {
	p := &progressReader{r: r, size: size, shown: -1}
	if size >= progressMin && isatty.IsTerminal(os.Stderr.Fd()) {
		p.bar = os.Stderr
		fmt.Fprintf(p.bar, "Checking %s (%d bytes)\n", name, size)
	}
	return p
}

func (p *progressReader) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	p.n += int64(n)
	if p.bar != nil && p.size > 0 {
		pct := int(p.n * 100 / p.size)
		if pct > 100 {
			pct = 100
		}
		if pct != p.shown {
			p.shown = pct
			w := pct * 40 / 100
			fmt.Fprintf(p.bar, "\r[%s%s] %3d%%", strings.Repeat("#", w), strings.Repeat(".", 40-w), pct)
		}
	}
	return n, err
}

// done ends the bar's line.
func (p *progressReader) done() {
	if p.bar != nil {
		fmt.Fprintln(p.bar)
	}
}
