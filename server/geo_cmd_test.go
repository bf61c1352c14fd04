package server

import (
	"strings"
	"testing"
)

// TestGeoCommandList: COMMAND LIST and COMMAND INFO know the geo commands.
func TestGeoCommandList(t *testing.T) {
	ts := newTestServer(t)
	c := ts.client()
	list := ts.doR(t, c, "COMMAND", "LIST")
	for _, name := range []string{"geoadd", "geodist", "geohash", "geopos", "georadius", "georadius_ro",
		"georadiusbymember", "georadiusbymember_ro", "geosearch", "geosearchstore"} {
		if !strings.Contains(list, `"`+name+`"`) {
			t.Errorf("COMMAND LIST lacks %s", name)
		}
		if info := ts.doR(t, c, "COMMAND", "INFO", name); !strings.Contains(info, "+@geo") {
			t.Errorf("COMMAND INFO %s: %s", name, info)
		}
	}
	if got := ts.doR(t, c, "COMMAND", "LIST", "FILTERBY", "ACLCAT", "geo"); strings.Count(got, `"geo`) != 10 {
		t.Errorf("COMMAND LIST FILTERBY ACLCAT geo: %s", got)
	}
}
