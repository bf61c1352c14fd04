package daemon

import (
	"os"
	"path/filepath"
	"strconv"

	"github.com/vigil-kv/vigil/sentinel"
)

// The failover timeline (SENTINEL TIMELINE, sentinel/timeline.go) is kept
// in "<sentinel.conf>.timeline.json", next to the configuration, so it
// survives restarts. A missing file is an empty history; a corrupt one is
// logged and ignored.

func (d *Daemon) timelineFile() string {
	if d.st == nil || d.st.File == "" {
		return ""
	}
	return d.st.File + ".timeline.json"
}

// loadTimeline reads the persisted history into the core (at Start).
func (d *Daemon) loadTimeline() {
	path := d.timelineFile()
	if path == "" {
		return
	}
	data, err := os.ReadFile(path)
	if err != nil {
		if !os.IsNotExist(err) {
			d.log.Warn().Err(err).Str("file", path).Msg("Can't read the failover timeline, starting with an empty one")
		}
		return
	}
	if err := d.core.LoadTimeline(data); err != nil {
		d.log.Warn().Err(err).Str("file", path).Msg("Corrupt failover timeline ignored")
		return
	}
	d.timelineVer = d.core.TimelineVersion()
}

// saveTimeline writes the history when a failover was added to it since
// the last save: to a temp name in the same directory, then renamed.
func (d *Daemon) saveTimeline() {
	v := d.core.TimelineVersion()
	if v == d.timelineVer {
		return
	}
	d.timelineVer = v
	path := d.timelineFile()
	if path == "" {
		return
	}
	data, err := d.core.TimelineJSON()
	if err == nil {
		err = writeFileAtomic(path, data)
	}
	if err != nil {
		d.log.Warn().Err(err).Str("file", path).Msg("Can't save the failover timeline")
	}
}

func writeFileAtomic(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	if _, err = f.Write(data); err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}

// sTimeline is SENTINEL TIMELINE <master-name>: the master's last
// failovers, oldest first, each a map like SENTINEL MASTERS' entries, with
// "phases" (name, time-ms, since-start-ms, detail) and "rejected" (replica,
// reason) as arrays of maps.
func sTimeline(c *client, a [][]byte) {
	var recs []sentinel.FailoverRecord
	ok := false
	name := string(a[2])
	c.d.call(func() { recs, ok = c.d.core.Timeline(name) })
	if !ok {
		c.w.Error(errNoSuchMaster)
		return
	}
	c.w.ArrayLen(len(recs))
	for i := range recs {
		r := &recs[i]
		f := r.Fields()
		c.w.MapLen(len(f) + 2)
		for _, x := range f {
			c.w.BulkString(x.Name)
			c.w.BulkString(x.Value)
		}
		c.w.BulkString("phases")
		c.w.ArrayLen(len(r.Phases))
		for _, p := range r.Phases {
			c.w.MapLen(4)
			c.w.BulkString("name")
			c.w.BulkString(p.Name)
			c.w.BulkString("time-ms")
			c.w.BulkString(strconv.FormatInt(p.At, 10))
			c.w.BulkString("since-start-ms")
			c.w.BulkString(strconv.FormatInt(p.At-r.Start, 10))
			c.w.BulkString("detail")
			c.w.BulkString(p.Detail)
		}
		c.w.BulkString("rejected")
		c.w.ArrayLen(len(r.Rejected))
		for _, x := range r.Rejected {
			c.w.MapLen(2)
			c.w.BulkString("replica")
			c.w.BulkString(x.Replica)
			c.w.BulkString("reason")
			c.w.BulkString(x.Reason)
		}
	}
}
