"""The LLVM NVPTX back end of llvmlite (a newer LLVM than clang-14's) on the bitcode clang-14 makes of
kernels.cu: newer targets and PTX versions than clang-14 can write. Issue 33's corpus.
Usage: python llvm.py BITCODE OUT_DIR NAME."""
import os
import sys

import llvmlite.binding as llvm

# (target, PTX feature): the Hopper, Blackwell and consumer-Blackwell targets with their PTX versions.
TARGETS = [("sm_80", "+ptx70"), ("sm_89", "+ptx78"), ("sm_90", "+ptx80"), ("sm_90a", "+ptx80"),
           ("sm_100a", "+ptx86"), ("sm_120a", "+ptx87")]


def main():
    bitcode, out, name = sys.argv[1:4]
    os.makedirs(out, exist_ok=True)
    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()
    target = llvm.Target.from_triple("nvptx64-nvidia-cuda")
    data = open(bitcode, "rb").read()
    for cpu, features in TARGETS:
        for opt in (0, 3):
            module = llvm.parse_bitcode(data)
            module.triple = "nvptx64-nvidia-cuda"
            machine = target.create_target_machine(cpu=cpu, features=features, opt=opt)
            open(os.path.join(out, f"{name}.{cpu}.O{opt}.ptx"), "w").write(machine.emit_assembly(module))


if __name__ == "__main__":
    main()
