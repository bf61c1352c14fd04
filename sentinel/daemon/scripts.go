package daemon

import (
	"errors"
	"os/exec"
	"strconv"
	"syscall"

	"github.com/vigil-kv/vigil/sentinel"
)

// Script limits (sentinel.c).
const (
	scriptMaxRunning = 16  // SENTINEL_SCRIPT_MAX_RUNNING
	scriptMaxQueue   = 256 // SENTINEL_SCRIPT_MAX_QUEUE
	scriptMaxRetry   = 10  // SENTINEL_SCRIPT_MAX_RETRY
)

// scriptJob is a sentinelScriptJob.
type scriptJob struct {
	argv    []string
	running bool
	retry   int
	start   int64 // run at (scheduled) or started at (running), unix ms
	cmd     *exec.Cmd
	pid     int
}

// scriptQueue runs notification and client-reconfig scripts as sentinel.c
// does: at most 16 at a time, 256 queued, killed after SCRIPT-MAX-RUNTIME,
// retried (exit 1 or a signal) up to 10 times with a doubling delay. It is
// owned by the loop goroutine.
type scriptQueue struct {
	d    *Daemon
	jobs []*scriptJob
}

type scriptInfo struct {
	argv    []string
	running bool
	pid     int
	ms      int64
	retry   int
}

func newScriptQueue(d *Daemon) *scriptQueue { return &scriptQueue{d: d} }

// schedule is sentinelScheduleScriptExecution.
func (q *scriptQueue) schedule(path string, args []string) {
	argv := append([]string{path}, args...)
	q.jobs = append(q.jobs, &scriptJob{argv: argv, start: 0})
	if len(q.jobs) > scriptMaxQueue {
		for i, j := range q.jobs {
			if !j.running {
				q.jobs = append(q.jobs[:i], q.jobs[i+1:]...)
				q.d.log.Warn().Msg("Too many scripts queued: dropping the oldest pending one")
				break
			}
		}
	}
}

func (q *scriptQueue) counts() (running, queued int) {
	for _, j := range q.jobs {
		if j.running {
			running++
		}
	}
	return running, len(q.jobs)
}

// tick is sentinelRunPendingScripts + sentinelKillTimedoutScripts.
func (q *scriptQueue) tick() {
	now := nowMs()
	maxRuntime := q.d.core.Tunables().ScriptMaxRuntime
	for _, j := range q.jobs {
		if j.running && now-j.start > maxRuntime {
			q.d.notify(sentinel.LevelWarning, "-script-timeout", j.argv[0]+" "+strconv.Itoa(j.pid))
			if j.cmd != nil && j.cmd.Process != nil {
				_ = j.cmd.Process.Kill()
			}
		}
	}
	running, _ := q.counts()
	for _, j := range q.jobs {
		if running >= scriptMaxRunning {
			break
		}
		if j.running || j.start > now {
			continue
		}
		q.run(j, now)
		if j.running {
			running++
		}
	}
}

func (q *scriptQueue) run(j *scriptJob, now int64) {
	j.retry++
	cmd := exec.Command(j.argv[0], j.argv[1:]...)
	// execve(argv[0]) as sentinelRunPendingScripts: a bare name is a path
	// relative to the working directory, not looked up in $PATH.
	cmd.Path, cmd.Err = j.argv[0], nil
	if err := cmd.Start(); err != nil {
		// Redis's forked child exits with 2 when exec fails: no retry.
		q.d.notify(sentinel.LevelWarning, "-script-error", j.argv[0]+" 0 2")
		q.remove(j)
		return
	}
	j.running = true
	j.start = now
	j.cmd = cmd
	j.pid = cmd.Process.Pid
	q.d.notify(sentinel.LevelDebug, "+script-child", strconv.Itoa(j.pid))
	go func() {
		err := cmd.Wait()
		q.d.post(func() { q.finished(j, err) })
	}()
}

func (q *scriptQueue) remove(j *scriptJob) {
	for i, x := range q.jobs {
		if x == j {
			q.jobs = append(q.jobs[:i], q.jobs[i+1:]...)
			return
		}
	}
}

// finished is sentinelCollectTerminatedScripts for one job.
func (q *scriptQueue) finished(j *scriptJob, err error) {
	bysignal, exitcode := 0, 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			bysignal = int(ws.Signal())
		} else {
			exitcode = ee.ExitCode()
		}
	}
	q.d.notify(sentinel.LevelDebug, "-script-child", strconv.Itoa(j.pid)+" "+strconv.Itoa(bysignal)+" "+strconv.Itoa(exitcode))
	if (bysignal != 0 || exitcode == 1) && j.retry != scriptMaxRetry {
		j.running = false
		j.pid = 0
		j.cmd = nil
		j.start = nowMs() + q.retryDelay(j.retry)
		return
	}
	if bysignal != 0 || exitcode != 0 {
		q.d.notify(sentinel.LevelWarning, "-script-error", j.argv[0]+" "+strconv.Itoa(bysignal)+" "+strconv.Itoa(exitcode))
	}
	q.remove(j)
}

// retryDelay is sentinelScriptRetryDelay.
func (q *scriptQueue) retryDelay(retry int) int64 {
	delay := q.d.core.Tunables().ScriptRetryDelay
	for ; retry > 1; retry-- {
		delay *= 2
	}
	return delay
}

func (q *scriptQueue) pending(now int64) []scriptInfo {
	var out []scriptInfo
	for _, j := range q.jobs {
		si := scriptInfo{argv: j.argv, running: j.running, pid: j.pid, retry: j.retry}
		if j.running {
			si.ms = now - j.start
		} else if j.start > now {
			si.ms = j.start - now
		}
		out = append(out, si)
	}
	return out
}

func (q *scriptQueue) killAll() {
	for _, j := range q.jobs {
		if j.running && j.cmd != nil && j.cmd.Process != nil {
			_ = j.cmd.Process.Kill()
		}
	}
}
