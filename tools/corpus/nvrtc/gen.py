"""NVRTC (the runtime compiler of the nvidia-cuda-nvrtc wheel, through cuda-bindings) on the CUDA C++
in tools/corpus/cuda/, for several virtual targets and option sets. Issue 33's corpus.
Usage: python gen.py SRC_DIR INCLUDE_DIR OUT_DIR."""
import glob
import os
import sys

from cuda.bindings import nvrtc

ARCHS = ["compute_75", "compute_80", "compute_86", "compute_89", "compute_90", "compute_90a", "compute_100a",
         "compute_120"]
OPTIONS = {"default": [], "fast": ["--use_fast_math"], "lineinfo": ["-lineinfo"], "G": ["-G"]}


def text(get_size, get, prog):
    _, n = get_size(prog)
    buf = b" " * n
    get(prog, buf)
    return buf.rstrip(b"\0").decode()


def main():
    src_dir, inc, out = sys.argv[1:4]
    os.makedirs(out, exist_ok=True)
    ok = failed = 0
    for f in sorted(glob.glob(os.path.join(src_dir, "*.cu"))):
        name = os.path.basename(f)[:-3]
        source = open(f).read().encode()
        for arch in ARCHS:
            for tag, extra in OPTIONS.items():
                path = os.path.join(out, f"{name}.{arch}.{tag}.ptx")
                if os.path.exists(path) and os.path.getmtime(path) > os.path.getmtime(f):
                    ok += 1
                    continue
                _, prog = nvrtc.nvrtcCreateProgram(source, name.encode(), 0, [], [])
                opts = [f"--gpu-architecture={arch}", f"-I{inc}", f"-I{inc}/cccl", "-default-device", "-std=c++17"]
                err, = nvrtc.nvrtcCompileProgram(prog, len(opts + extra), [o.encode() for o in opts + extra])
                if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
                    failed += 1
                    log = text(nvrtc.nvrtcGetProgramLogSize, nvrtc.nvrtcGetProgramLog, prog)
                    print(f"nvrtc failed: {name} {arch} {tag}: {log[:200]}", file=sys.stderr)
                else:
                    open(path, "w").write(text(nvrtc.nvrtcGetPTXSize, nvrtc.nvrtcGetPTX, prog))
                    ok += 1
                nvrtc.nvrtcDestroyProgram(prog)
    print(f"{ok} NVRTC modules in {out} ({failed} not compiled)", file=sys.stderr)


if __name__ == "__main__":
    main()
