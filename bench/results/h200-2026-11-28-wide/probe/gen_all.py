import re, sys, os
src = os.environ.get('APPS_SRC', 'build-gpu/apps-src') + '/'
out = os.path.dirname(os.path.abspath(__file__)) + '/all/'
for fn in sorted(os.listdir(src)):
    s = open(src + fn).read()
    s = s.replace('#include "corun/corun_launch.cuh"', '#include "corun/corun_launch.cuh"\n#include "blocks.cuh"', 1)
    # plain kernels: optional template line, __global__ void NAME(PARAMS) {\n    NAME__corun_body(ARGS, blockIdx, gridDim);\n}
    pat = re.compile(r'(template\s*<[^>]*>\s*\n)?__global__ void ([^\n(]*?\b(\w+))\(([^{]*?)\) \{\n    \3__corun_body(<[^>]*>)?\((.*?)blockIdx, gridDim\);\n\}\n', re.S)
    adds = []
    def rep(m):
        tmpl, head, name, params, targs, args = m.group(1) or '', m.group(2), m.group(3), m.group(4), m.group(5) or '', m.group(6)
        headpb = head[:len(head) - len(name)] + name + '__pbnc'
        k = '%s__global__ void %s(%s) {\n    blocks_form<0>(gridDim, [&](const uint3 b, const dim3 g) { %s__corun_body%s(%sb, g); });\n}\n' % (tmpl, headpb, params, name, targs, args)
        adds.append(name)
        return m.group(0) + k
    s = pat.sub(rep, s)
    # launchers
    lpat = re.compile(r'(static __host__ inline void (\w+)__corun_launch\(const ::corun::config &corun_cfg[^{]*\)\n\{\n)(.*?::corun::launch<.*?>\(corun_slot, corun_cfg, "\w+", ([^,]+), [^,]+, [^,]+, (.*?)\);\n)', re.S)
    n = 0
    def lrep(m):
        global n
        head, name, rest, plainref, args = m.group(1), m.group(2), m.group(3), m.group(4).strip(), m.group(5)
        if name not in adds:
            return m.group(0)
        pbref = plainref.replace(name, name + '__pbnc', 1)
        cfg = 'corun_cfg.grid, corun_cfg.block, corun_cfg.smem, corun_cfg.stream'
        ins = '    { static int pf = probe_form(); if (pf == 1) { %s<<<%s>>>(%s); return; } if (pf == 3) { %s<<<%s>>>(%s); return; } }\n' % (plainref, cfg, args, pbref, cfg, args)
        return head + ins + rest
    s2 = lrep_s = lpat.sub(lrep, s)
    cnt = s2.count('static int pf = probe_form()')
    print(fn, 'kernels', len(adds), 'launchers', cnt)
    open(out + fn, 'w').write(s2)
