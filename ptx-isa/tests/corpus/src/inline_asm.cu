// Inline PTX as kernels write it: scoped registers, local labels, predicates, lane id.
extern "C" __global__ void asm_kernel(unsigned* out, const unsigned* in, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned v = in[i], lane, r;
    asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));
    asm volatile(
        "{\n\t"
        ".reg .pred p;\n\t"
        ".reg .u32 t;\n\t"
        "setp.eq.u32 p, %1, 0;\n\t"
        "@p bra.uni ZERO;\n\t"
        "popc.b32 t, %1;\n\t"
        "add.u32 %0, t, %2;\n\t"
        "bra.uni DONE;\n"
        "ZERO:\n\t"
        "mov.u32 %0, %2;\n"
        "DONE:\n\t"
        "}\n"
        : "=r"(r)
        : "r"(v), "r"(lane));
    unsigned long long clk;
    asm volatile("mov.u64 %0, %%clock64;" : "=l"(clk));
    out[i] = r + (unsigned)(clk & 0);
}
