package main

import (
	"fmt"
	"sort"
	"time"

	"github.com/beluga-nlp/beluga/benchmarks/internal/stepbench"
	"github.com/beluga-nlp/beluga/models"
	"github.com/beluga-nlp/beluga/models/backend"
)

// bf16Floor prints the bf16 step beside the fp32 one: the step's products
// (recorded from the fp32 step: a bf16 model asks for the same ones)
// replayed with the bf16 product, their sum the bf16 GEMM floor, and the
// step with model.precision bf16 as a multiple of it and of fp32's step.
func bf16Floor(sh shape, steps int, counts map[gemmCall]int, fp32Median, fp32Floor float64) error {
	cfg, err := stepbench.Config(sh.name)
	if err != nil {
		return err
	}
	step, err := stepbench.New(cfg, sh.batch, sh.seq)
	if err != nil {
		return err
	}
	if err := step.SetPrecision(string(models.PrecisionBF16)); err != nil {
		return err
	}
	if err := step.Run(); err != nil { // warm-up
		return err
	}
	times := make([]float64, 0, steps)
	for s := 0; s < steps; s++ {
		t := time.Now()
		if err := step.Run(); err != nil {
			return err
		}
		times = append(times, time.Since(t).Seconds())
	}
	sort.Float64s(times)
	median, fastest := times[len(times)/2], times[0]
	var flops, floor, floorCPU float64
	for c, n := range counts {
		t, cpu := timeCall(step.Backend().Gemm, c)
		flops += float64(n) * c.flops()
		floor += float64(n) * t
		floorCPU += float64(n) * cpu
	}
	kernel := backend.BF16Kernel(step.Backend())
	fmt.Printf("  bf16 (%s): gemm %6.1f GFLOP/s over the step's products (%.4f s, %.2f× fp32's floor); from CPU time %6.1f GFLOP/s\n",
		kernel, flops/floor/1e9, floor, floor/fp32Floor, flops/floorCPU/1e9)
	fmt.Printf("  bf16 step median %.4f s (fastest %.4f s) over %d steps = %.2f× the bf16 floor, %.2f× the fp32 floor, %.2f× the fp32 step\n",
		median, fastest, steps, median/floor, median/fp32Floor, median/fp32Median)
	fmt.Printf("floor-bf16 %s kernel=%s median_x=%.2f fastest_x=%.2f step_time=%.4f fastest=%.4f floor_s=%.4f gemm_gflops=%.1f vs_fp32_floor=%.2f vs_fp32_step=%.2f\n",
		sh.name, kernel, median/floor, fastest/floor, median, fastest, floor, flops/floor/1e9, median/fp32Floor, median/fp32Median)
	return nil
}
