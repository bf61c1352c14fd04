package rdb

import "fmt"

// redisLines maps the format of a load failure to the line of Redis
// 7.0.15's rdb.c that reports it through rdbReportError
// (rdbReportCorruptRDB or rdbReportReadError), which logs it as
// "Internal error in RDB reading offset N, function at rdb.c:LINE -> ...":
// in verbose for RESTORE, as the last words before exiting for a file.
// Failures Redis meets without a report (a short read, a bad double...)
// are absent: RESTORE logs nothing for them; -1 is a line Redis logs as
// it is, without rdbReportError.
var redisLines = map[string]int{
	"rdbGenericLoadStringObject failed allocating %d bytes":           -1, // logged as is
	"OOM in dictTryExpand %d":                                         1785,
	"Hash with dup elements":                                          1951,
	"Unknown length encoding %d in rdbLoadLen()":                      236,
	"Invalid LZF compressed string":                                   413,
	"Unknown RDB string encoding type %d":                             529,
	"Duplicate set members detected":                                  1809,
	"Zset with NAN score detected":                                    1882,
	"Duplicate zset fields detected":                                  1894,
	"Duplicate hash fields detected":                                  1969,
	"Quicklist integrity check failed.":                               2048,
	"Listpack integrity check failed.":                                2071,
	"Ziplist integrity check failed.":                                 2081,
	"Hash zipmap with dup elements, or big length (%d)":               2154,
	"Zipmap integrity check failed.":                                  2130,
	"List ziplist integrity check failed.":                            2189,
	"Intset integrity check failed.":                                  2214,
	"Zset ziplist integrity check failed.":                            2229,
	"Zset listpack integrity check failed.":                           2255,
	"Hash ziplist integrity check failed.":                            2275,
	"Hash listpack integrity check failed.":                           2301,
	"Stream node key entry is not the size of a stream ID":            2343,
	"Stream listpacks len loading failed.":                            2327,
	"Stream master ID loading failed: invalid encoding or I/O error.": 2338,
	"Stream listpacks loading failed.":                                2355,
	"Stream object metadata loading failed.":                          2424,
	"Stream cgroup count loading failed.":                             2438,
	"Error reading the consumer group name from Stream":               2449,
	"Stream cgroup ID loading failed.":                                2458,
	"Stream cgroup offset loading failed.":                            2469,
	"Stream PEL size loading failed.":                                 2495,
	"Stream PEL ID loading failed.":                                   2502,
	"Stream PEL NACK loading failed.":                                 2510,
	"Stream consumers num loading failed.":                            2527,
	"Error reading the consumer name from Stream group.":              2534,
	"Stream short read reading seen time.":                            2549,
	"Stream consumer PEL num loading failed.":                         2558,
	"Stream short read reading PEL streamID.":                         2566,
	"Stream consumer PEL entry already has a consumer assigned":       2583,
	"Stream listpack integrity check failed.":                         2362,
	"Empty listpack inside stream":                                    2374,
	"Listpack re-added with existing key":                             2386,
	"Stream length inconsistent with rax entries":                     2430,
	"Duplicated consumer group name %s":                               2480,
	"Duplicated global PEL entry loading stream consumer group":       2516,
	"Duplicate stream consumer detected.":                             2543,
	"Consumer entry not found in group global PEL":                    2573,
	"Duplicated consumer PEL entry  loading a stream consumer group":  2592,
	"Stream CG PEL entry without consumer":                            2611,
	"Unknown RDB encoding type %d":                                    2681,
	"The RDB file contains module data I can't load: no matching module type '%s' (module type %s not supported)": 2636,
}

// Reports are the lines Redis logs for e: its cause's first (a failed
// read's own report), then its own.
func (e *Error) Reports(off int64) []string {
	var out []string
	if e.Cause != nil {
		out = e.Cause.Reports(off)
	}
	if r := e.Report(off); r != "" {
		out = append(out, r)
	}
	return out
}

// Report is rdbReportError's message for e at the loading offset off
// (server.loading_loaded_bytes), "" when Redis reports nothing.
func (e *Error) Report(off int64) string {
	switch e.Line {
	case 0:
		return ""
	case -1:
		return e.Reason
	}
	return fmt.Sprintf("Internal error in RDB reading offset %d, function at rdb.c:%d -> %s", off, e.Line, e.Reason)
}
