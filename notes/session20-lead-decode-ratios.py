import re,sys,statistics as st
def load(f):
    rows={}
    for line in open(f):
        if not re.match(r"\| \d",line): continue
        c=[x.strip() for x in line.split('|')[1:-1]]
        key=(c[0],c[2])
        try: vals=[float(c[4]),float(c[7]),float(c[10]),float(c[11]),float(c[12])]
        except: continue
        rows.setdefault(key,[]).append(vals)
    return {k:[st.median(v[i] for v in vs) for i in range(5)] for k,vs in rows.items()}
def torch(f):
    t={}
    for line in open(f):
        m=re.match(r"\| (\d+x\d+) \| 1 \| (\d+) \| (\d+) \| (\d+) \w+ \| \d+ \| (\d+) \| (\d+) \| (\d+)",line)
        if m: t[m.group(1)]=(int(m.group(4)),int(m.group(7)))
    return t
names=["cold","b2b","after","clr>anoth","anoth>small"]
for i in (1,2):
    r=load(f"notes/session20-lead-decode-bench-{i}.txt"); t=torch(f"notes/session20-lead-decode-torch-{i}.txt")
    print(f"== process {i}")
    for p in ["32x4096","32x16384","8x65536","1x131072"]:
        b,ctx=map(int,p.split('x'))
        bf=r[(p,'contiguous')]; f8=r[(p,'contiguous e4m3')]
        gbs=[b*ctx*8*128*2*2/x/1e6 for x in bf[:2]]
        print(p, "bf16/torch cold %.3f b2b %.3f"%(gbs[0]/t[p][0],gbs[1]/t[p][1]),
              "| fp8/bf16", " ".join(f"{n} {bf[j]/f8[j]:.3f}" for j,n in enumerate(names)))
        for pg,base in [("paged 16 e4m3",f8),("paged 16 e4m3 as served",f8),("paged 64 e4m3",f8),("paged 16",bf),("paged 16 as served",bf),("paged 64",bf)]:
            x=r[(p,pg)]
            print("   %-24s contig/paged cold %.3f b2b %.3f after %.3f"%(pg,base[0]/x[0],base[1]/x[1],base[2]/x[2]))
        print("   us cold-after bf16 %.1f e4m3 %.1f; clr>anoth-after %.1f %.1f; anoth>small-after %.1f %.1f"%((bf[0]-bf[2])*1e3,(f8[0]-f8[2])*1e3,(bf[3]-bf[2])*1e3,(f8[3]-f8[2])*1e3,(bf[4]-bf[2])*1e3,(f8[4]-f8[2])*1e3))
