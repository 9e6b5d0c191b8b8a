"""Session 23's clocks call: each profiled kernel's time, DRAM throughput and SM clock from ncu's
logs (ncu-{none,base}-N.txt: the decode bench's rows; ncu-torch-{none,base}-N-BxCTX.txt: torch's
SDPA), the decode and attention kernels only, base against free clocks.
Usage: python3 notes/session23-lead-clocks-summary.py LOGDIR"""
import glob
import os
import re
import sys

d = sys.argv[1]
keep = re.compile(r"^  (decode_\w+|cudnn_generated\w+|void pytorch_flash::flash_fwd\w*)")
for f in sorted(glob.glob(os.path.join(d, "ncu-*.txt"))):
    name, vals, out = None, {}, []
    for line in open(f):
        m = keep.match(line)
        if m or re.match(r"^  \S", line):
            if name and vals:
                out.append((name, vals))
            grid = re.search(r"\(\d+, \d+, \d+\)", line)
            name, vals = (f"{m.group(1)[:48]} {grid.group(0) if grid else ''}" if m else None), {}
            continue
        if name:
            parts = line.split()
            if parts and parts[0].startswith(("gpu__time", "dram__", "sm__cycles")):
                v = float(parts[-1].replace(",", ""))
                vals[parts[0].split(".")[0]] = v * (1000 if parts[1] == "ms" else 1)
    if name and vals:
        out.append((name, vals))
    print(f"== {os.path.basename(f)}")
    for n, v in out:
        print(f"  {n}: {v.get('gpu__time_duration', 0):.1f} us, DRAM {v.get('dram__throughput', 0):.1f} %, "
              f"SM {v.get('sm__cycles_elapsed', 0):.2f} GHz")
