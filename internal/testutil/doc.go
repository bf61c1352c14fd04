// Package testutil is test support shared by the packages' tests: Poll,
// the one polling helper (wait for a condition, the deadline only bounding
// the wait, never a timing assertion), and StartRedis, the one way a test
// starts a reference redis-server 7.0 (Debian's /usr/bin/redis-server) on a
// unix socket or a free loopback port, skipping the test when it is not
// installed.
//
// Only tests import it. It imports the standard library only.
package testutil
