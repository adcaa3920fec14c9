package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/beluga-nlp/beluga/experiments"
)

// slurmSpec is the quickstart's design — the IID baseline, then IID→(IID+T)
// seen and held out by class and by test type — on package train's intent
// fixtures, so that its 7 runs take seconds (the quickstart's real suite
// takes a minute a run on a 2-core machine); the epochs make each run last
// long enough to be requeued in the middle of one.
const slurmSpec = "name: slurm-quickstart\n" + intentSweep + `configurations: [IID-IID+T]
methods: [vanilla]
scores: [seen, class, type]
grid: {iid_epochs: [600], epochs: [300], batch_size: [4], lr: [0.01], iid_lr: [0.01]}
`

// slurm is a one-node Slurm cluster of the test's own: munged, slurmctld
// and slurmd started from a temporary configuration, stopped at cleanup.
type slurm struct {
	dir, conf string
	env       []string
}

// startSlurm starts the cluster, or skips the test saying why the daemons
// cannot start here.
func startSlurm(t *testing.T) *slurm {
	t.Helper()
	for _, bin := range []string{"munged", "slurmctld", "slurmd", "sbatch", "squeue", "scontrol"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Skipf("no %s: Debian's slurm-wlm and munge are not installed (.ci/run installs them)", bin)
		}
	}
	if os.Geteuid() != 0 {
		t.Skip("slurmd runs jobs as their users and must run as root: not root here")
	}
	// Short paths: munge's socket path must fit a sockaddr_un.
	dir, err := os.MkdirTemp("", "slurm-")
	if err != nil {
		t.Fatal(err)
	}
	s := &slurm{dir: dir, conf: filepath.Join(dir, "slurm.conf")}
	for _, d := range []string{"munge", "state", "spool", "log"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	key := make([]byte, 1024)
	for i := range key {
		key[i] = byte(i*7 + 13)
	}
	if err := os.WriteFile(filepath.Join(dir, "munge", "key"), key, 0o400); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "munge", "sock")
	t.Cleanup(func() {
		// This cluster's daemons: asked to stop, then ended by the PIDs
		// they wrote if they are still there.
		shutdown := exec.Command("scontrol", "shutdown")
		shutdown.Env = append(os.Environ(), "SLURM_CONF="+s.conf)
		shutdown.Run()
		for _, f := range []string{"slurmctld.pid", "slurmd.pid"} {
			b, err := os.ReadFile(filepath.Join(dir, f))
			pid, perr := strconv.Atoi(strings.TrimSpace(string(b)))
			if err != nil || perr != nil {
				continue
			}
			for i := 0; i < 50 && syscall.Kill(pid, 0) == nil; i++ {
				time.Sleep(100 * time.Millisecond)
			}
			if syscall.Kill(pid, 0) == nil {
				syscall.Kill(pid, syscall.SIGTERM)
			}
		}
		exec.Command("munged", "--stop", "--socket="+sock).Run()
		os.RemoveAll(dir)
	})
	if out, err := exec.Command("munged", "--force", "--key-file="+filepath.Join(dir, "munge", "key"), "--socket="+sock,
		"--pid-file="+filepath.Join(dir, "munge", "pid"), "--log-file="+filepath.Join(dir, "log", "munged.log"),
		"--seed-file="+filepath.Join(dir, "munge", "seed")).CombinedOutput(); err != nil {
		t.Skipf("munged does not start here: %v\n%s", err, out)
	}
	host, _ := os.Hostname()
	ports := freePorts(t, 2)
	conf := fmt.Sprintf(`ClusterName=belugatest
SlurmctldHost=%[1]s(127.0.0.1)
SlurmctldPort=%[3]d
SlurmdPort=%[4]d
AuthType=auth/munge
AuthInfo=socket=%[2]s/munge/sock
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation=%[2]s/state
SlurmdSpoolDir=%[2]s/spool
SlurmctldPidFile=%[2]s/slurmctld.pid
SlurmdPidFile=%[2]s/slurmd.pid
SlurmctldLogFile=%[2]s/log/slurmctld.log
SlurmdLogFile=%[2]s/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
MpiDefault=none
ReturnToService=2
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
PlugStackConfig=/dev/null
MinJobAge=3600
NodeName=%[1]s NodeAddr=127.0.0.1 CPUs=%[5]d RealMemory=4000 State=UNKNOWN
PartitionName=test Nodes=%[1]s Default=YES MaxTime=INFINITE State=UP
`, host, dir, ports[0], ports[1], min(runtime.NumCPU(), 2))
	if err := os.WriteFile(s.conf, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SLURM_CONF", s.conf)
	s.env = append(os.Environ(), "SLURM_CONF="+s.conf)
	for _, d := range []string{"slurmctld", "slurmd"} {
		if out, err := exec.Command(d, "-f", s.conf).CombinedOutput(); err != nil {
			t.Skipf("%s does not start here: %v\n%s%s", d, err, out, s.logs())
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		out, _ := exec.Command("sinfo", "-h", "-o", "%T").Output()
		if strings.TrimSpace(string(out)) == "idle" {
			return s
		}
		if time.Now().After(deadline) {
			t.Skipf("the one-node cluster did not come up (node %q)%s", strings.TrimSpace(string(out)), s.logs())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// logs are the daemons' logs, for a message.
func (s *slurm) logs() string {
	var b strings.Builder
	for _, f := range []string{"slurmctld.log", "slurmd.log", "munged.log"} {
		out, _ := os.ReadFile(filepath.Join(s.dir, "log", f))
		fmt.Fprintf(&b, "\n--- %s\n%s", f, out)
	}
	return b.String()
}

func freePorts(t *testing.T, n int) []int {
	t.Helper()
	var ports []int
	var ls []net.Listener
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	for _, l := range ls {
		l.Close()
	}
	return ports
}

// slurmCmd runs a Slurm client command and returns its output.
func slurmCmd(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command(args[0], args[1:]...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// TestSweepOnSlurm submits a sweep to a real Slurm as a 4-task job array
// through docs/sweep.sbatch, requeues one task while it is in the middle of
// a run (scontrol requeue), and checks that the store the array leaves and
// its table are those of a local run, byte for byte: the same runs, the
// same files (but for when, where and how long each ran: timing.json,
// train/metrics.json's seconds), the same table.
func TestSweepOnSlurm(t *testing.T) {
	cluster := startSlurm(t)
	_ = cluster
	sbatch, err := filepath.Abs("../../docs/sweep.sbatch")
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	intentDir(t, work, slurmSpec)
	// ./beluga: this test binary, which runs beluga's main under
	// BELUGA_RUN_MAIN=1 (TestMain); sbatch passes the environment on.
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(work, "beluga"), readFile(t, self), 0o755); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(work, "logs"), 0o755)
	t.Setenv("BELUGA_RUN_MAIN", "1")

	start := time.Now()
	job := slurmCmd(t, "sbatch", "--parsable", "--array=0-3", "--cpus-per-task=1", "--mem=1000M", "--time=30",
		"--chdir="+work, sbatch, "spec.yaml")
	t.Logf("sbatch --array=0-3 docs/sweep.sbatch spec.yaml: job %s", job)
	store := &experiments.Store{Dir: filepath.Join(work, "store")}

	// Requeue the first task seen running while a run is claimed (in the
	// middle of one), and let it start again at once (Slurm delays a
	// requeued job by two minutes).
	requeued := ""
	deadline := time.Now().Add(2 * time.Minute)
	for requeued == "" {
		if time.Now().After(deadline) {
			t.Fatalf("no task was seen running in the middle of a run\n%s%s", slurmCmd(t, "squeue"), cluster.logs())
		}
		// A task whose process holds a run's claim is in the middle of it.
		claims := map[string]string{} // PID → run
		paths, _ := filepath.Glob(filepath.Join(store.Dir, "*", experiments.ClaimFile))
		for _, p := range paths {
			var c struct{ PID int }
			if b, err := os.ReadFile(p); err == nil && json.Unmarshal(b, &c) == nil && c.PID > 0 {
				claims[fmt.Sprint(c.PID)] = filepath.Base(filepath.Dir(p))
			}
		}
		// Each array task has its own job ID (%A), which listpids takes.
		for _, line := range strings.Split(slurmCmd(t, "squeue", "-h", "-j", job, "-t", "R", "-o", "%i %A"), "\n") {
			f := strings.Fields(line)
			if len(f) != 2 {
				continue
			}
			task := f[0]
			out, _ := exec.Command("scontrol", "listpids", f[1]).Output()
			for _, line := range strings.Split(string(out), "\n") {
				if f := strings.Fields(line); len(f) > 0 && claims[f[0]] != "" && requeued == "" {
					requeued = task
					slurmCmd(t, "scontrol", "requeue", task)
					t.Logf("%4.1fs: scontrol requeue %s while its process %s ran run %s", time.Since(start).Seconds(), task, f[0], claims[f[0]])
				}
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	// Once Slurm has put it back in the queue, with its begin time two
	// minutes on.
	for !strings.Contains(slurmCmd(t, "scontrol", "show", "job", requeued), "Reason=BeginTime") {
		if time.Now().After(deadline) {
			t.Fatalf("the requeued task %s is not pending:\n%s", requeued, slurmCmd(t, "scontrol", "show", "job", requeued))
		}
		time.Sleep(100 * time.Millisecond)
	}
	slurmCmd(t, "scontrol", "update", "JobId="+requeued, "StartTime=now")
	deadline = time.Now().Add(8 * time.Minute)
	for slurmCmd(t, "squeue", "-h", "-j", job) != "" {
		if time.Now().After(deadline) {
			t.Fatalf("the array did not finish\n%s%s", slurmCmd(t, "squeue"), cluster.logs())
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Logf("%4.1fs: the array is done", time.Since(start).Seconds())
	for i := range 4 {
		task := fmt.Sprintf("%s_%d", job, i)
		info := slurmCmd(t, "scontrol", "show", "job", task)
		if !strings.Contains(info, "JobState=COMPLETED") || !strings.Contains(info, "ExitCode=0:0") {
			log, _ := os.ReadFile(filepath.Join(work, "logs", fmt.Sprintf("beluga-%s_%d.out", job, i)))
			t.Errorf("task %s did not complete:\n%s\n%s", task, info, log)
		}
		restarts := "Restarts=0"
		if task == requeued {
			restarts = "Restarts=1"
		}
		if !strings.Contains(info, restarts) {
			t.Errorf("task %s: want %s:\n%s", task, restarts, info)
		}
		t.Logf("task %s: %s", task, fieldsOf(info, "JobState=", "Restarts=", "ExitCode=", "StartTime=", "EndTime="))
		if task == requeued {
			log, _ := os.ReadFile(filepath.Join(work, "logs", fmt.Sprintf("beluga-%s_%d.out", job, i)))
			for _, line := range strings.Split(strings.TrimSpace(string(log)), "\n") {
				if !strings.Contains(line, "input check") && !strings.Contains(line, "input coverage") {
					t.Logf("  %s's second attempt: %s", task, line)
				}
			}
		}
	}

	// The same sweep, locally.
	local := filepath.Join(work, "local")
	if out, err := execute(t, "run", filepath.Join(work, "spec.yaml"), "--store", local); err != nil {
		t.Fatalf("local run: %v\n%s", err, out)
	}
	compareStores(t, store.Dir, local)
	// Each report first says which sweep of its store it is (the store's
	// path and the sweep's time, on standard error): the tables follow.
	onSlurm := withoutStoreNote(mustRun(t, "report", store.Dir))
	locally := withoutStoreNote(mustRun(t, "report", local))
	if onSlurm != locally {
		t.Errorf("tables differ:\non Slurm\n%s\nlocally\n%s", onSlurm, locally)
	}
	t.Logf("the table, on Slurm and locally, byte for byte:\n%s", onSlurm)
}

// withoutStoreNote drops the line naming the store and its sweep.
func withoutStoreNote(out string) string {
	var keep []string
	for _, l := range strings.SplitAfter(out, "\n") {
		if !strings.HasPrefix(l, "run store ") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "")
}

// fieldsOf picks key=value fields out of scontrol's record.
func fieldsOf(info string, keys ...string) string {
	var out []string
	for _, f := range strings.Fields(info) {
		for _, k := range keys {
			if strings.HasPrefix(f, k) {
				out = append(out, f)
			}
		}
	}
	return strings.Join(out, " ")
}

// compareStores checks that two stores hold the same runs with the same
// files, byte for byte, but for what records when, where and how long a
// run ran (timing.json, train/metrics.json) and the digests done records
// of those.
func compareStores(t *testing.T, a, b string) {
	t.Helper()
	runs := func(dir string) []string {
		var ids []string
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
				ids = append(ids, e.Name())
			}
		}
		return ids
	}
	ra, rb := runs(a), runs(b)
	if !slices.Equal(ra, rb) || len(ra) != 7 {
		t.Fatalf("runs %v on Slurm, %v locally: want the same 7", ra, rb)
	}
	when := map[string]bool{experiments.TimingFile: true, "train/metrics.json": true}
	// train_spec.json is compared with the stores' paths swapped (below),
	// so its digest is left out of done's records here.
	recorded := map[string]bool{experiments.TrainSpecFile: true}
	files := 0
	for _, id := range ra {
		var ma, mb experiments.Manifest
		json.Unmarshal(readFile(t, filepath.Join(a, id, experiments.DoneFile)), &ma)
		json.Unmarshal(readFile(t, filepath.Join(b, id, experiments.DoneFile)), &mb)
		for f := range when {
			delete(ma.Files, f)
			delete(mb.Files, f)
		}
		for f := range recorded {
			delete(ma.Files, f)
			delete(mb.Files, f)
		}
		if fmt.Sprint(ma) != fmt.Sprint(mb) {
			t.Errorf("run %s: done records other files:\n%v\n%v", id, ma, mb)
		}
		filepath.WalkDir(filepath.Join(a, id), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			rel, _ := filepath.Rel(filepath.Join(a, id), path)
			rel = filepath.ToSlash(rel)
			if when[rel] || rel == experiments.DoneFile {
				return nil
			}
			files++
			got := readFile(t, path)
			if rel == experiments.TrainSpecFile {
				// The paths a run read: its IID baseline's model lies in its
				// own store.
				got = bytes.ReplaceAll(got, []byte(a), []byte(b))
			}
			if other, err := os.ReadFile(filepath.Join(b, id, rel)); err != nil || !bytes.Equal(got, other) {
				t.Errorf("run %s: %s differs (%v)", id, rel, err)
			}
			return nil
		})
	}
	t.Logf("stores: the same %d runs, %d files each byte for byte (timing.json and train/metrics.json aside; train_spec.json with the stores' paths swapped)", len(ra), files)
}
