// Package proctitle sets the process title that ps and /proc/PID/cmdline
// show, as Redis's setproctitle.c: the memory of the original argv
// strings (and of the environment strings that follow them) is
// overwritten with the title. Both binaries call Init first thing in
// main and Set once listening (and on CONFIG SET proc-title-template);
// the title's text is configs.ExpandProcTitle's.
//
// It imports the standard library only.
package proctitle
