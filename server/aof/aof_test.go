package aof

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vigil-kv/vigil/internal/resp"
	"github.com/vigil-kv/vigil/server/keyspace"
)

func TestManifestRoundTrip(t *testing.T) {
	in := "file appendonly.aof.2.base.rdb seq 2 type b\nfile appendonly.aof.1.incr.aof seq 1 type h\nfile appendonly.aof.3.incr.aof seq 3 type i\nfile appendonly.aof.4.incr.aof seq 4 type i\n"
	m, err := ParseManifest(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if m.Base.Name != "appendonly.aof.2.base.rdb" || len(m.History) != 1 || len(m.Incr) != 2 || m.IncrSeq != 4 || m.BaseSeq != 2 {
		t.Fatalf("parsed %+v", m)
	}
	if got := string(m.Bytes()); got != in {
		t.Fatalf("Bytes:\n%s\nwant\n%s", got, in)
	}
	// New base and incr names follow getNewBaseFileNameAndMarkPreAsHistory.
	if n := m.NewBase("appendonly.aof", false); n != "appendonly.aof.3.base.aof" {
		t.Fatal(n)
	}
	if n := m.NewIncr("appendonly.aof"); n != "appendonly.aof.5.incr.aof" {
		t.Fatal(n)
	}
	m.MarkRewrittenIncrAsHistory(true)
	// markRewrittenIncrAofAsHistory adds the covered incr files at the
	// history's head in their order; the old base went to the head before.
	if got, want := string(m.Bytes()), "file appendonly.aof.3.base.aof seq 3 type b\n"+
		"file appendonly.aof.3.incr.aof seq 3 type h\nfile appendonly.aof.4.incr.aof seq 4 type h\n"+
		"file appendonly.aof.2.base.rdb seq 2 type h\nfile appendonly.aof.1.incr.aof seq 1 type h\n"+
		"file appendonly.aof.5.incr.aof seq 5 type i\n"; got != want {
		t.Fatalf("after rewrite:\n%s\nwant\n%s", got, want)
	}
	// Quoted names and extra pairs.
	m2, err := ParseManifest(strings.NewReader("# comment\nfile \"a b\\x41\" seq 1 type b future x\n"))
	if err != nil || m2.Base.Name != "a bA" {
		t.Fatalf("%v %+v", err, m2)
	}
	if got := string(m2.Bytes()); got != "file \"a bA\" seq 1 type b\n" {
		t.Fatal(got)
	}
}

func TestManifestErrors(t *testing.T) {
	for _, tt := range []struct{ in, msg string }{
		{"", "Found an empty AOF manifest"},
		{"\n", "Invalid AOF manifest file format"},
		{"file a seq 1\n", "Invalid AOF manifest file format"},
		{"file a seq 1 type b x\n", "Invalid AOF manifest file format"},
		{"file a seq 0 type b\n", "Invalid AOF manifest file format"},
		{"file dir/a seq 1 type b\n", "File can't be a path, just a filename"},
		{"file a seq 1 type b\nfile b seq 2 type b\n", "Found duplicate base file information"},
		{"file a seq 2 type i\nfile b seq 2 type i\n", "Found a non-monotonic sequence number"},
		{"file a seq 1 type x\n", "Unknown AOF file type"},
		{"file a seq 1 type b", "The AOF manifest file contains too long line"},
		{"file " + strings.Repeat("a", 2000) + " seq 1 type b\n", "The AOF manifest file contains too long line"},
		{"file \"a seq 1 type b\n", "Invalid AOF manifest file format"},
	} {
		_, err := ParseManifest(strings.NewReader(tt.in))
		var me *ManifestError
		if !errors.As(err, &me) || me.Msg != tt.msg {
			t.Errorf("%q: got %v, want %q", tt.in, err, tt.msg)
		}
	}
}

func TestWriteManifestAtomic(t *testing.T) {
	dir := t.TempDir()
	m := &Manifest{}
	m.NewBase("appendonly.aof", true)
	m.NewIncr("appendonly.aof")
	if err := WriteManifest(dir, "appendonly.aof", m); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(dir, "appendonly.aof.manifest"))
	if err != nil || string(got) != "file appendonly.aof.1.base.rdb seq 1 type b\nfile appendonly.aof.1.incr.aof seq 1 type i\n" {
		t.Fatalf("%v %q", err, got)
	}
	if _, err := os.Stat(filepath.Join(dir, "temp-appendonly.aof.manifest")); !os.IsNotExist(err) {
		t.Fatal("temp manifest left behind")
	}
}

func cmds(argvs ...[]string) []byte {
	var b []byte
	for _, a := range argvs {
		b = resp.AppendCommandStrings(b, a...)
	}
	return b
}

type applied struct{ got [][]string }

func (a *applied) apply(argv [][]byte) error {
	s := make([]string, len(argv))
	for i, x := range argv {
		s[i] = string(x)
	}
	a.got = append(a.got, s)
	return nil
}

func TestLoadFileTruncated(t *testing.T) {
	full := cmds([]string{"SELECT", "0"}, []string{"SET", "a", "1"}, []string{"SET", "b", "2"})
	valid := len(cmds([]string{"SELECT", "0"}, []string{"SET", "a", "1"}))
	for cut := valid + 1; cut < len(full); cut++ {
		dir := t.TempDir()
		p := filepath.Join(dir, "f.aof")
		os.WriteFile(p, full[:cut], 0o644)
		var a applied
		var warns []string
		o := &Options{Apply: a.apply, Warn: func(s string) { warns = append(warns, s) }}
		_, _, _, err := LoadFile(p, o, true)
		var ce *CorruptError
		if !errors.As(err, &ce) || ce.Offset != int64(valid) || !strings.Contains(ce.Msg, "Unexpected end of file") {
			t.Fatalf("cut %d: %v", cut, err)
		}
		o.LoadTruncated = true
		a.got = nil
		_, st, size, err := LoadFile(p, o, true)
		if err != nil || st != StatusTruncated || size != int64(valid) || len(a.got) != 2 {
			t.Fatalf("cut %d: %v %v %d %v", cut, err, st, size, a.got)
		}
		if fi, _ := os.Stat(p); fi.Size() != int64(valid) {
			t.Fatalf("cut %d: not truncated: %d", cut, fi.Size())
		}
		if len(warns) == 0 || !strings.Contains(warns[0], "short read while loading the AOF file") {
			t.Fatalf("warnings %q", warns)
		}
		// Not the last file: truncation is refused.
		os.WriteFile(p, full[:cut], 0o644)
		if _, _, _, err := LoadFile(p, o, false); err == nil {
			t.Fatalf("cut %d: a truncated non-last file loaded", cut)
		}
	}
}

func TestLoadFileMultiRevert(t *testing.T) {
	head := cmds([]string{"SELECT", "0"}, []string{"SET", "a", "1"})
	full := append(append([]byte{}, head...), cmds([]string{"MULTI"}, []string{"SET", "b", "2"})...)
	dir := t.TempDir()
	p := filepath.Join(dir, "f.aof")
	os.WriteFile(p, full, 0o644)
	var a applied
	_, st, size, err := LoadFile(p, &Options{Apply: a.apply, LoadTruncated: true}, true)
	if err != nil || st != StatusTruncated || size != int64(len(head)) {
		t.Fatalf("%v %v %d", err, st, size)
	}
}

func TestLoadFileFormatError(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f.aof")
	good := cmds([]string{"SET", "a", "1"})
	os.WriteFile(p, append(append([]byte{}, good...), "garbage\r\n"...), 0o644)
	var a applied
	_, _, _, err := LoadFile(p, &Options{Apply: a.apply, LoadTruncated: true}, true)
	var ce *CorruptError
	if !errors.As(err, &ce) || ce.Offset != int64(len(good)) || !strings.Contains(ce.Msg, "redis-check-aof") {
		t.Fatalf("%v", err)
	}
}

func TestLoadFileHugeLength(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f.aof")
	os.WriteFile(p, []byte("*2000000000\r\n$4294967296\r\nab"), 0o644)
	var a applied
	_, _, _, err := LoadFile(p, &Options{Apply: a.apply}, true)
	if err == nil {
		t.Fatal("loaded")
	}
}

func TestLoadFileRDBPreamble(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f.rdb")
	tail := cmds([]string{"SET", "a", "1"})
	os.WriteFile(p, append([]byte("REDIS0010xxxx"), tail...), 0o644)
	var a applied
	if _, _, _, err := LoadFile(p, &Options{Apply: a.apply}, true); err == nil {
		t.Fatal("RDB base loaded without an RDB loader")
	}
	o := &Options{Apply: a.apply, RDB: func(r io.Reader) (int64, error) { return 13, nil }}
	if _, _, _, err := LoadFile(p, o, true); err != nil || len(a.got) != 1 {
		t.Fatalf("%v %v", err, a.got)
	}
}

func TestUpgradeAndRewrite(t *testing.T) {
	dir := t.TempDir()
	old := cmds([]string{"SELECT", "0"}, []string{"SET", "a", "1"})
	os.WriteFile(filepath.Join(dir, "appendonly.aof"), old, 0o644)
	m := &Manager{Cfg: Config{Dir: dir, DirName: "appendonlydir", Filename: "appendonly.aof", Fsync: FsyncAlways, Format: CommandFormat}}
	var a applied
	res, err := m.Load(&Options{Apply: a.apply})
	if err != nil || res.Status != StatusOK || len(a.got) != 2 {
		t.Fatalf("%v %+v %v", err, res, a.got)
	}
	if fileExists(filepath.Join(dir, "appendonly.aof")) || !fileExists(filepath.Join(dir, "appendonlydir", "appendonly.aof")) {
		t.Fatal("old AOF not moved into the directory")
	}
	if err := m.OpenOnStart(nil); err != nil {
		t.Fatal(err)
	}
	man, _ := os.ReadFile(filepath.Join(dir, "appendonlydir", "appendonly.aof.manifest"))
	if string(man) != "file appendonly.aof seq 1 type b\nfile appendonly.aof.1.incr.aof seq 1 type i\n" {
		t.Fatalf("manifest %q", man)
	}
	now := time.Now()
	m.W.Append(0, [][]byte{[]byte("SET"), []byte("b"), []byte("2")})
	if err := m.W.Flush(now, false); err != nil {
		t.Fatal(err)
	}
	// Rewrite: a new incr file receives writes at once.
	rw, err := m.StartRewrite(now, 42, true)
	if err != nil {
		t.Fatal(err)
	}
	m.W.Append(0, [][]byte{[]byte("SET"), []byte("c"), []byte("3")})
	m.W.Flush(now, false)
	ks := keyspace.New(16)
	ks.DBs[0].Set([]byte("a"), keyspace.NewString([]byte("1"), 0), 0)
	ks.DBs[0].Set([]byte("b"), keyspace.NewString([]byte("2"), 0), 0)
	snap, _ := ks.BeginSnapshot()
	size, err := WriteBaseFile(rw.TempBase, rw.Format(), func(dst []keyspace.Item) ([]keyspace.Item, bool) {
		return snap.Step(dst, 100)
	})
	snap.Close()
	if err := m.FinishRewrite(rw, size, err); err != nil {
		t.Fatal(err)
	}
	man, _ = os.ReadFile(filepath.Join(dir, "appendonlydir", "appendonly.aof.manifest"))
	if string(man) != "file appendonly.aof.2.base.aof seq 2 type b\nfile appendonly.aof.2.incr.aof seq 2 type i\n" {
		t.Fatalf("manifest %q", man)
	}
	ents, _ := os.ReadDir(filepath.Join(dir, "appendonlydir"))
	if len(ents) != 3 {
		t.Fatalf("files left: %v", ents)
	}
	m.Stop(now)
	// Reload: a, b from the base, c from the incr.
	m2 := &Manager{Cfg: m.Cfg}
	a.got = nil
	if _, err := m2.Load(&Options{Apply: a.apply}); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, c := range a.got {
		if c[0] == "SET" {
			keys = append(keys, c[1])
		}
	}
	if strings.Join(keys, ",") != "a,b,c" && strings.Join(keys, ",") != "b,a,c" {
		t.Fatalf("replayed %v", a.got)
	}
}

func TestScannerAnnotations(t *testing.T) {
	in := append([]byte("#TS:123\r\n"), cmds([]string{"SET", "a", "1"})...)
	sc := NewScanner(bytes.NewReader(in), 0)
	argv, err := sc.Next()
	if err != nil || string(argv[0]) != "SET" {
		t.Fatal(err, argv)
	}
}

func TestWriterEverysec(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f.aof")
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	w := NewWriter(f, 0, FsyncEverysec, nil)
	now := time.Now()
	w.Append(0, [][]byte{[]byte("SET"), []byte("a"), []byte("1")})
	if err := w.Flush(now, false); err != nil {
		t.Fatal(err)
	}
	want := cmds([]string{"SELECT", "0"}, []string{"SET", "a", "1"})
	if got, _ := os.ReadFile(p); !bytes.Equal(got, want) || w.Size() != int64(len(want)) {
		t.Fatalf("file %q size %d", got, w.Size())
	}
	// The background fsync catches up with the size.
	deadline := time.Now().Add(10 * time.Second)
	for w.fsyncOffset.Load() != w.Size() || w.PendingFsync() != 0 {
		if time.Now().After(deadline) {
			t.Fatal("background fsync never completed")
		}
		time.Sleep(time.Millisecond)
	}
	// A write while an fsync is pending is postponed, then forced after 2 s.
	w.pending.Add(1)
	w.Append(0, [][]byte{[]byte("SET"), []byte("b"), []byte("2")})
	w.Flush(now, false)
	if w.Buffered() == 0 {
		t.Fatal("write not postponed while an fsync is pending")
	}
	w.Flush(now.Add(time.Second), false)
	if w.Buffered() == 0 {
		t.Fatal("write not postponed within 2 s")
	}
	w.Flush(now.Add(3*time.Second), false)
	if w.Buffered() != 0 || w.Delayed() != 1 {
		t.Fatalf("buffered %d delayed %d", w.Buffered(), w.Delayed())
	}
	w.pending.Add(-1)
	if err := w.Close(now); err != nil {
		t.Fatal(err)
	}
}

func TestWriterTimestamp(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f.aof")
	f, _ := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	w := NewWriter(f, 0, FsyncNo, nil)
	w.Timestamp(100)
	w.Append(0, [][]byte{[]byte("SET"), []byte("a"), []byte("1")})
	w.Timestamp(100)
	w.Append(0, [][]byte{[]byte("SET"), []byte("b"), []byte("1")})
	w.Close(time.Now())
	got, _ := os.ReadFile(p)
	want := append([]byte("#TS:100\r\n"), cmds([]string{"SELECT", "0"}, []string{"SET", "a", "1"}, []string{"SET", "b", "1"})...)
	if !bytes.Equal(got, want) {
		t.Fatalf("%q", got)
	}
	var a applied
	if _, _, _, err := LoadFile(p, &Options{Apply: a.apply}, true); err != nil || len(a.got) != 3 {
		t.Fatal(err, a.got)
	}
}

func TestEnableRetryAfterFailedRewrite(t *testing.T) {
	dir := t.TempDir()
	m := &Manager{Cfg: Config{Dir: dir, DirName: "appendonlydir", Filename: "appendonly.aof", Fsync: FsyncAlways, Format: CommandFormat}}
	if err := m.ReadManifest(); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	rw, err := m.StartRewrite(now, 1, true)
	if err != nil || !m.Enabling() {
		t.Fatal(err)
	}
	m.W.Append(0, [][]byte{[]byte("SET"), []byte("lost"), []byte("1")})
	m.W.Flush(now, false)
	var notices []string
	m.Notice = func(s string) { notices = append(notices, s) }
	if err := m.FinishRewrite(rw, 0, errors.New("disk full")); err == nil || !m.Enabling() {
		t.Fatal("a failed first rewrite must leave the AOF waiting")
	}
	// backgroundRewriteDoneHandler's cleanup: aofDelTempIncrAofFile.
	if fileExists(filepath.Join(dir, "appendonlydir", "temp-appendonly.aof.incr")) ||
		!slices.Contains(notices, "Removing the temp incr aof file temp-appendonly.aof.incr in the background") {
		t.Fatalf("temp incr kept after a failed first rewrite; notices %q", notices)
	}
	// The retry starts the temporary incr file over.
	rw, err = m.StartRewrite(now, 1, true)
	if err != nil {
		t.Fatal(err)
	}
	m.W.Append(0, [][]byte{[]byte("SET"), []byte("kept"), []byte("1")})
	m.W.Flush(now, false)
	ks := keyspace.New(16)
	ks.DBs[0].Set([]byte("lost"), keyspace.NewString([]byte("1"), 0), 0)
	snap, _ := ks.BeginSnapshot()
	size, err := WriteBaseFile(rw.TempBase, rw.Format(), func(dst []keyspace.Item) ([]keyspace.Item, bool) { return snap.Step(dst, 10) })
	snap.Close()
	if err := m.FinishRewrite(rw, size, err); err != nil || m.Enabling() {
		t.Fatal(err)
	}
	man, _ := os.ReadFile(filepath.Join(dir, "appendonlydir", "appendonly.aof.manifest"))
	if string(man) != "file appendonly.aof.1.base.aof seq 1 type b\nfile appendonly.aof.1.incr.aof seq 1 type i\n" {
		t.Fatalf("manifest %q", man)
	}
	incr, _ := os.ReadFile(filepath.Join(dir, "appendonlydir", "appendonly.aof.1.incr.aof"))
	if want := cmds([]string{"SELECT", "0"}, []string{"SET", "kept", "1"}); !bytes.Equal(incr, want) {
		t.Fatalf("incr %q", incr)
	}
	m.Stop(now)
	ents, _ := os.ReadDir(filepath.Join(dir, "appendonlydir"))
	if len(ents) != 3 {
		t.Fatalf("files: %v", ents)
	}
}

// TestLoadManifestMissingFile: a file the manifest lists but the directory
// lacks fails the load before anything is applied, with the line
// getAppendOnlyFileSize logs (aof-multi-part.tcl's "some file missing"
// greps "appendonly.aof.1.incr.aof .*No such file or directory").
func TestLoadManifestMissingFile(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "appendonly.aof.1.base.aof"), cmds([]string{"SET", "k1", "v1"}), 0o644)
	os.WriteFile(filepath.Join(dir, "appendonly.aof.2.incr.aof"), cmds([]string{"SET", "k2", "v2"}), 0o644)
	m, err := ParseManifest(strings.NewReader("file appendonly.aof.1.base.aof seq 1 type b\n" +
		"file appendonly.aof.1.incr.aof seq 1 type i\nfile appendonly.aof.2.incr.aof seq 2 type i\n"))
	if err != nil {
		t.Fatal(err)
	}
	var a applied
	_, err = LoadManifest(m, &Options{Dir: dir, Apply: a.apply})
	want := "Unable to obtain the AOF file appendonly.aof.1.incr.aof length. stat: No such file or directory"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("err %v, want %q", err, want)
	}
	if len(a.got) != 0 {
		t.Errorf("applied %v before failing", a.got)
	}
}

// TestUpgradeInterrupted: the layout of an upgrade interrupted before the
// rename (the manifest lists the old file as base, the file still in the
// server dir) is upgraded again, as aofUpgradePrepare: the file moves into
// the directory and stays there (the listed base is replaced, not made a
// history file to delete), as aof-multi-part.tcl's "continue the upgrade
// from the interrupted upgrade state".
func TestUpgradeInterrupted(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "appendonly.aof"), cmds([]string{"SET", "k1", "v1"}, []string{"SET", "k2", "v2"}), 0o644)
	os.Mkdir(filepath.Join(dir, "appendonlydir"), 0o755)
	os.WriteFile(filepath.Join(dir, "appendonlydir", "appendonly.aof.manifest"), []byte("file appendonly.aof seq 1 type b\n"), 0o644)
	m := &Manager{Cfg: Config{Dir: dir, DirName: "appendonlydir", Filename: "appendonly.aof", Fsync: FsyncAlways, Format: CommandFormat}}
	var a applied
	if _, err := m.Load(&Options{Apply: a.apply}); err != nil || len(a.got) != 2 {
		t.Fatalf("%v %v", err, a.got)
	}
	if err := m.OpenOnStart(nil); err != nil {
		t.Fatal(err)
	}
	defer m.Stop(time.Now())
	if fileExists(filepath.Join(dir, "appendonly.aof")) || !fileExists(filepath.Join(dir, "appendonlydir", "appendonly.aof")) {
		t.Fatalf("old AOF not moved into the directory: %v", dirList(dir))
	}
	man, _ := os.ReadFile(filepath.Join(dir, "appendonlydir", "appendonly.aof.manifest"))
	if string(man) != "file appendonly.aof seq 1 type b\nfile appendonly.aof.1.incr.aof seq 1 type i\n" {
		t.Fatalf("manifest %q", man)
	}
}

func dirList(dir string) []string {
	var out []string
	filepath.WalkDir(dir, func(p string, _ os.DirEntry, _ error) error {
		out = append(out, p)
		return nil
	})
	return out
}

// TestDisableAutoGC: with aof-disable-auto-gc (Config.DisableAutoGC) a
// rewrite keeps the old base and incr file as history on disk and in the
// manifest; DeleteHistory removes them once it is off again.
func TestDisableAutoGC(t *testing.T) {
	dir := t.TempDir()
	m := &Manager{Cfg: Config{Dir: dir, DirName: "appendonlydir", Filename: "appendonly.aof", Fsync: FsyncAlways, Format: CommandFormat, DisableAutoGC: true}}
	if err := m.ReadManifest(); err != nil {
		t.Fatal(err)
	}
	ks := keyspace.New(16)
	ks.DBs[0].Set([]byte("a"), keyspace.NewString([]byte("1"), 0), 0)
	writeBase := func(path string) (int64, error) {
		snap, _ := ks.BeginSnapshot()
		defer snap.Close()
		return WriteBaseFile(path, CommandFormat, func(dst []keyspace.Item) ([]keyspace.Item, bool) { return snap.Step(dst, 10) })
	}
	if err := m.OpenOnStart(writeBase); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	rw, err := m.StartRewrite(now, 1, true)
	if err != nil {
		t.Fatal(err)
	}
	size, err := writeBase(rw.TempBase)
	if err := m.FinishRewrite(rw, size, err); err != nil {
		t.Fatal(err)
	}
	man, _ := os.ReadFile(filepath.Join(dir, "appendonlydir", "appendonly.aof.manifest"))
	want := "file appendonly.aof.2.base.aof seq 2 type b\nfile appendonly.aof.1.incr.aof seq 1 type h\n" +
		"file appendonly.aof.1.base.aof seq 1 type h\nfile appendonly.aof.2.incr.aof seq 2 type i\n"
	if string(man) != want {
		t.Fatalf("manifest %q, want %q", man, want)
	}
	for _, f := range []string{"appendonly.aof.1.base.aof", "appendonly.aof.1.incr.aof"} {
		if !fileExists(filepath.Join(dir, "appendonlydir", f)) {
			t.Fatalf("history file %s deleted", f)
		}
	}
	if err := m.DeleteHistory(); err != nil || len(m.Manifest.History) != 2 {
		t.Fatalf("DeleteHistory with auto gc disabled: %v %+v", err, m.Manifest)
	}
	m.Cfg.DisableAutoGC = false
	if err := m.DeleteHistory(); err != nil {
		t.Fatal(err)
	}
	man, _ = os.ReadFile(filepath.Join(dir, "appendonlydir", "appendonly.aof.manifest"))
	if want := "file appendonly.aof.2.base.aof seq 2 type b\nfile appendonly.aof.2.incr.aof seq 2 type i\n"; string(man) != want {
		t.Fatalf("manifest %q, want %q", man, want)
	}
	for _, f := range []string{"appendonly.aof.1.base.aof", "appendonly.aof.1.incr.aof"} {
		if fileExists(filepath.Join(dir, "appendonlydir", f)) {
			t.Fatalf("history file %s kept", f)
		}
	}
	m.Stop(now)
}
