// Command floor measures how far beluga's training step is from what this
// CPU can do: the FMA units' peak per vector width (a loop of independent
// FMAs in assembly), the best matrix product beluga has at each GEMM shape
// of the step (recorded from a real step, then replayed on every backend
// and kernel path), and the step itself (benchmarks/gostep's), printed as a
// multiple of its GEMM floor: the time the step's products alone would take
// at the best measured rate. Two floors: the best engine per shape on any
// kernel path (what the machine can do), and on the step's own path
// (BELUGA_KERNELS=avx2 on an AVX-512 CPU: what the avx2 kernels can do, so
// that the step's multiple is its overhead on that path); each engine's
// rate is also given as a share of its path's FMA peak.
//
//	go run ./benchmarks/floor [-models tiny,mini,base] [-steps N]
//	go run ./benchmarks/floor -paths    # the kernel paths this CPU has
//	go run ./benchmarks/floor -bf16=false  # fp32 alone on an AVX512_BF16 CPU
//
// With -bf16 (the default where the CPU has AVX512_BF16) each shape's step
// is also timed in bf16 (model.precision) against the bf16 GEMM floor: the
// step's products replayed with the bf16 product.
//
// Shapes: BERT-tiny at batch 32 × 64, BERT-mini at 32 × 128, bert-base at
// 8 × 128. Products that the models run one per goroutine (the attention's
// per-head products) are timed with one copy per core running at once, as
// in the step.
package main

import (
	"flag"
	"fmt"
	"math"
	"os"
	"runtime"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/cpu"

	"github.com/beluga-nlp/beluga/benchmarks/internal/stepbench"
	"github.com/beluga-nlp/beluga/models"
	"github.com/beluga-nlp/beluga/models/backend"
)

type fmaLoop struct {
	name          string
	lanes, chains int
	run           func(n int)
}

// fmaLoops are the FMA peak loops of the kernel paths this CPU can run: the
// kernels' own (vec32's, generated with the micro-kernels), at each vector
// width.
func fmaLoops() ([]fmaLoop, error) {
	var out []fmaLoop
	for _, p := range models.KernelPaths() {
		lanes, chains, loop, err := backend.FMAPeak(p)
		if err != nil {
			return nil, err
		}
		if loop != nil {
			out = append(out, fmaLoop{p, lanes, chains, loop})
		}
	}
	return out, nil
}

// shape is one benchmarked model shape and its batch.
type shape struct {
	name       string
	batch, seq int
}

var shapes = map[string]shape{
	"tiny": {"tiny", 32, 64},
	"mini": {"mini", 32, 128},
	"base": {"base", 8, 128},
}

func main() {
	list := flag.String("models", "tiny,mini,base", "comma-separated model shapes: tiny (32×64), mini (32×128), base (8×128)")
	steps := flag.Int("steps", 0, "timed steps per shape (0: 10 for tiny and mini, 3 for base)")
	flag.BoolVar(&withBF16, "bf16", models.BF16Kernel() == "avx512_bf16", "also time the step in bf16 (model.precision) against its own GEMM floor (default: on CPUs with AVX512_BF16)")
	paths := flag.Bool("paths", false, "print the kernel paths this machine can run, fastest first, and exit (for CI's loop over BELUGA_KERNELS)")
	flag.Parse()
	if *paths {
		fmt.Println(strings.Join(models.KernelPaths(), " "))
		return
	}
	if err := run(strings.Split(*list, ","), *steps); err != nil {
		fmt.Fprintln(os.Stderr, "floor:", err)
		os.Exit(1)
	}
}

func run(names []string, steps int) error {
	if _, err := models.KernelPath(); err != nil {
		return err
	}
	procs := runtime.GOMAXPROCS(0)
	fmt.Printf("cpu: %s; flags: %s\n", cpuModel(), strings.Join(simdFlags(), " "))
	fmt.Printf("GOMAXPROCS=%d; build BLAS %s; default backend %s; kernels %s; load %s\n",
		procs, models.BLAS, defaultBackendName(), kernelsLine(), loadavg())
	loops, err := fmaLoops()
	if err != nil {
		return err
	}
	for _, l := range loops {
		one, _ := fmaPeak(l, 1)
		all, allCPU := fmaPeak(l, procs)
		peaks[l.name] = rate{all, allCPU}
		fmt.Printf("fma peak %-12s 1 core %6.1f GFLOP/s, %d cores %6.1f GFLOP/s; from CPU time %6.1f GFLOP/s\n", l.name, one, procs, all, allCPU)
	}
	for _, n := range names {
		sh, ok := shapes[n]
		if !ok {
			return fmt.Errorf("-models: unknown shape %q (want tiny, mini or base)", n)
		}
		if err := floorOf(sh, steps); err != nil {
			return fmt.Errorf("%s: %w", n, err)
		}
	}
	return nil
}

// peaks are the FMA peaks of the kernel paths on all cores, GFLOP/s, from
// the wall clock and from CPU time.
var peaks = map[string]rate{}

// rate is a rate from the wall clock and from CPU time, GFLOP/s.
type rate struct{ wall, cpu float64 }

// fmaPeak runs the loop on procs goroutines at once and returns the
// best GFLOP/s of five rounds, from the wall clock and from the CPU time
// used (divided by procs, as the products' rates are: on a loaded machine
// the wall clock counts the time other processes held the cores).
func fmaPeak(l fmaLoop, procs int) (wall, cpu float64) {
	const iters = 20_000_000
	for round := 0; round < 5; round++ {
		var wg sync.WaitGroup
		start, cpu0 := time.Now(), cpuSeconds()
		for p := 0; p < procs; p++ {
			wg.Add(1)
			go func() { defer wg.Done(); l.run(iters) }()
		}
		wg.Wait()
		flops := float64(procs) * iters * float64(l.chains) * float64(l.lanes) * 2
		wall = max(wall, flops/time.Since(start).Seconds()/1e9)
		cpu = max(cpu, flops/((cpuSeconds()-cpu0)/float64(procs))/1e9)
	}
	return wall, cpu
}

// gemmCall is one product of a step, as the models asked the backend.
type gemmCall struct {
	parallel, transA, transB bool
	m, n, k                  int
	alpha, beta              float32
	lda, ldb, ldc            int
}

func (g gemmCall) flops() float64 { return 2 * float64(g.m) * float64(g.n) * float64(g.k) }

// recorder is a backend that counts the products passing through it.
type recorder struct {
	backend.Backend
	mu     sync.Mutex
	counts map[gemmCall]int
}

func (r *recorder) Gemm(parallel, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	r.mu.Lock()
	r.counts[gemmCall{parallel, transA, transB, m, n, k, alpha, beta, lda, ldb, ldc}]++
	r.mu.Unlock()
	r.Backend.Gemm(parallel, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

func floorOf(sh shape, steps int) error {
	if steps <= 0 {
		steps = 10
		if sh.name == "base" {
			steps = 3
		}
	}
	cfg, err := stepbench.Config(sh.name)
	if err != nil {
		return err
	}
	step, err := stepbench.New(cfg, sh.batch, sh.seq)
	if err != nil {
		return err
	}
	// One step records the products; it is also the warm-up.
	stepBackend := step.Backend()
	rec := &recorder{Backend: stepBackend, counts: map[gemmCall]int{}}
	if err := step.SetBackend(rec); err != nil {
		return err
	}
	err = step.Run()
	if err := step.SetBackend(stepBackend); err != nil {
		return err
	}
	if err != nil {
		return err
	}
	times := make([]float64, 0, steps)
	cpus := make([]float64, 0, steps)
	procs := float64(runtime.GOMAXPROCS(0))
	for s := 0; s < steps; s++ {
		t, c := time.Now(), cpuSeconds()
		if err := step.Run(); err != nil {
			return err
		}
		times = append(times, time.Since(t).Seconds())
		cpus = append(cpus, (cpuSeconds()-c)/procs)
	}
	sort.Float64s(times)
	sort.Float64s(cpus)
	median, fastest, cpuMedian := times[len(times)/2], times[0], cpus[len(cpus)/2]

	calls := make([]gemmCall, 0, len(rec.counts))
	for c := range rec.counts {
		calls = append(calls, c)
	}
	sort.Slice(calls, func(i, j int) bool {
		return calls[i].flops()*float64(rec.counts[calls[i]]) > calls[j].flops()*float64(rec.counts[calls[j]])
	})
	path := stepBackend.Kernels()
	engines, err := gemmEngines(path)
	if err != nil {
		return err
	}
	// Two floors: the best engine per shape of any kernel path (what the
	// machine can do), and of the step's path alone (what the step's
	// kernels can do: its multiple is the step's overhead on that path).
	var flops float64
	var all, own floorSum
	best := map[string]float64{}    // seconds each engine would take for every product
	bestCPU := map[string]float64{} // the same from CPU time
	for _, c := range calls {
		n := float64(rec.counts[c])
		flops += n * c.flops()
		var allT, ownT floorSum
		for _, e := range engines {
			t, cpu := timeCall(e.gemm, c)
			best[e.name] += n * t
			bestCPU[e.name] += n * cpu
			allT.keep(t, cpu)
			if e.path == path {
				ownT.keep(t, cpu)
			}
		}
		all.add(n, allT)
		own.add(n, ownT)
	}
	fmt.Printf("\n%s (batch %d × %d): %d products, %d shapes, %.1f GFLOP a step\n", sh.name, sh.batch, sh.seq, total(rec.counts), len(calls), flops/1e9)
	for _, e := range engines {
		fmt.Printf("  gemm %-14s %6.1f GFLOP/s over the step's products (%.4f s); from CPU time %6.1f GFLOP/s%s\n",
			e.name, flops/best[e.name]/1e9, best[e.name], flops/bestCPU[e.name]/1e9, ofPeak(e.path, flops/best[e.name]/1e9, flops/bestCPU[e.name]/1e9))
	}
	fmt.Printf("  floor (best engine per shape) %.4f s = %.1f GFLOP/s; from CPU time %.4f s = %.1f GFLOP/s\n",
		all.wall, flops/all.wall/1e9, all.cpu, flops/all.cpu/1e9)
	if own.wall == 0 {
		// The portable path's products are not replayed (gemmEngines):
		// its multiples are NaN, never an infinite floor.
		own = floorSum{wall: math.NaN(), cpu: math.NaN()}
		fmt.Printf("  floor on the step's path (%s): not measured (its products are not replayed where a vector path exists)\n", path)
		fmt.Printf("  step median %.4f s (fastest %.4f s) over %d steps = %.2f× floor (fastest %.2f×); CPU time per core %.4f s = %.2f× the CPU-time floor\n",
			median, fastest, steps, median/all.wall, fastest/all.wall, cpuMedian, cpuMedian/all.cpu)
	} else {
		fmt.Printf("  floor on the step's path (%s) %.4f s = %.1f GFLOP/s; from CPU time %.4f s = %.1f GFLOP/s\n",
			path, own.wall, flops/own.wall/1e9, own.cpu, flops/own.cpu/1e9)
		fmt.Printf("  step median %.4f s (fastest %.4f s) over %d steps = %.2f× floor (fastest %.2f×), %.2f× its path's floor (fastest %.2f×); CPU time per core %.4f s = %.2f× the CPU-time floor, %.2f× its path's\n",
			median, fastest, steps, median/all.wall, fastest/all.wall, median/own.wall, fastest/own.wall, cpuMedian, cpuMedian/all.cpu, cpuMedian/own.cpu)
	}
	fmt.Printf("floor %s median_x=%.2f fastest_x=%.2f cpu_x=%.2f step_time=%.4f fastest=%.4f step_cpu=%.4f floor_s=%.4f floor_cpu_s=%.4f gemm_gflops=%.1f peak_rss_mb=%.0f path=%s path_floor_s=%.4f path_floor_cpu_s=%.4f path_median_x=%.2f path_fastest_x=%.2f path_cpu_x=%.2f\n",
		sh.name, median/all.wall, fastest/all.wall, cpuMedian/all.cpu, median, fastest, cpuMedian, all.wall, all.cpu, flops/all.wall/1e9, stepbench.PeakRSSMB(),
		path, own.wall, own.cpu, median/own.wall, fastest/own.wall, cpuMedian/own.cpu)
	if withBF16 {
		return bf16Floor(sh, steps, rec.counts, median, all.wall)
	}
	return nil
}

// floorSum is a floor's seconds, from the wall clock and from CPU time:
// for one shape the best engine's (keep), over the step the sum (add).
type floorSum struct{ wall, cpu float64 }

func (f *floorSum) keep(wall, cpu float64) {
	if f.wall == 0 || wall < f.wall {
		f.wall = wall
	}
	if f.cpu == 0 || cpu < f.cpu {
		f.cpu = cpu
	}
}

func (f *floorSum) add(n float64, shape floorSum) {
	f.wall += n * shape.wall
	f.cpu += n * shape.cpu
}

// ofPeak is a product's rate as a share of its kernel path's FMA peak on
// all cores, from the wall clock and from CPU time (each against the peak
// measured the same way), where the path has one.
func ofPeak(path string, wall, cpu float64) string {
	p, ok := peaks[path]
	if !ok || p.wall == 0 || p.cpu == 0 {
		return ""
	}
	return fmt.Sprintf(" = %.0f%% (CPU time %.0f%%) of the %s FMA peak", 100*wall/p.wall, 100*cpu/p.cpu, path)
}

// withBF16 is -bf16: the bf16 step and floor beside fp32's.
var withBF16 bool

func total(m map[gemmCall]int) int {
	t := 0
	for _, n := range m {
		t += n
	}
	return t
}

// engine is one way beluga can run a product, on a kernel path.
type engine struct {
	name, path string
	gemm       func(parallel, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int)
}

// timeCall returns the seconds one call of c takes in the step: the best of
// several rounds; a product that runs on one goroutine (parallel false) is
// timed with one copy per core at once, and its time divided by the cores.
// The second result is the same from the CPU time used, divided by the
// cores: what the call takes on cores of its own.
func timeCall(gemm func(parallel, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int), c gemmCall) (float64, float64) {
	copies := 1
	if !c.parallel {
		copies = runtime.GOMAXPROCS(0)
	}
	type bufs struct{ a, b, c []float32 }
	bs := make([]bufs, copies)
	for i := range bs {
		ar, br := c.m, c.k
		if c.transA {
			ar = c.k
		}
		if c.transB {
			br = c.n
		}
		bs[i] = bufs{fill(ar * c.lda), fill(br * c.ldb), fill(c.m * c.ldc)}
	}
	reps := max(1, int(2e7/c.flops()))
	procs := float64(runtime.GOMAXPROCS(0))
	once := func() (float64, float64) {
		var wg sync.WaitGroup
		start, cpu0 := time.Now(), cpuSeconds()
		for i := range bs {
			wg.Add(1)
			go func(x bufs) {
				defer wg.Done()
				for r := 0; r < reps; r++ {
					gemm(c.parallel, c.transA, c.transB, c.m, c.n, c.k, c.alpha, x.a, c.lda, x.b, c.ldb, c.beta, x.c, c.ldc)
				}
			}(bs[i])
		}
		wg.Wait()
		n := float64(reps * copies)
		return time.Since(start).Seconds() / n, (cpuSeconds() - cpu0) / n / procs
	}
	once()
	best, bestCPU := once()
	// The least disturbed of several rounds: on a shared machine the
	// minimum is what the product costs.
	for i, deadline := 0, time.Now().Add(400*time.Millisecond); i < 5 || time.Now().Before(deadline); i++ {
		w, c := once()
		best, bestCPU = min(best, w), min(bestCPU, c)
	}
	return best, bestCPU
}

// cpuSeconds is the CPU time the process has used (user and system): on a
// machine shared with other work it counts the cycles this process got,
// not the time it waited for them.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

func fill(n int) []float32 {
	x := make([]float32, max(n, 1))
	s := uint32(7)
	for i := range x {
		s = s*1664525 + 1013904223
		x[i] = float32(s>>8)/(1<<24) - 0.5
	}
	return x
}

func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return runtime.GOARCH
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "model name") {
			if _, v, ok := strings.Cut(line, ":"); ok {
				return strings.TrimSpace(v)
			}
		}
	}
	return runtime.GOARCH
}

// simdFlags are the vector extensions that matter to the kernels.
func simdFlags() []string {
	var out []string
	for _, f := range []struct {
		name string
		has  bool
	}{{"avx2", cpu.X86.HasAVX2}, {"fma", cpu.X86.HasFMA}, {"avx512f", cpu.X86.HasAVX512F},
		{"avx512bw", cpu.X86.HasAVX512BW}, {"avx512dq", cpu.X86.HasAVX512DQ}, {"avx512vl", cpu.X86.HasAVX512VL},
		{"avx512_vnni", cpu.X86.HasAVX512VNNI}, {"avx512_bf16", cpu.X86.HasAVX512BF16},
		{"asimd", cpu.ARM64.HasASIMD}} {
		if f.has {
			out = append(out, f.name)
		}
	}
	return out
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Join(strings.Fields(string(b))[:3], " ")
}
