package vec32

// The assembly is generated from one avo program per kernel, each written
// once as a function of the vector width (models/internal/vec32/asm, a
// module of its own so that avo is never a dependency of beluga's build).
// CI regenerates it and fails when the committed files differ.

//go:generate go run -C asm ./gelu -out ../gelu_amd64.s
//go:generate go run -C asm ./elem -out ../elem_amd64.s
//go:generate go run -C asm ./gemm -out ../kernel_amd64.s
//go:generate go run -C asm ./dropout -out ../dropout_amd64.s
//go:generate go run -C asm ./bf16 -out ../bf16_amd64.s
