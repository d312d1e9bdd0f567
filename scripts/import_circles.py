"""File-level `use` graph of src/: prints strongly connected components (import circles)."""
import os, re, sys
root = sys.argv[1] if len(sys.argv) > 1 else 'src'
files = {}
for d, _, fs in os.walk(root):
    for f in fs:
        if f.endswith('.rs'):
            p = os.path.join(d, f)
            rel = os.path.relpath(p, root)[:-3]
            parts = rel.split('/')
            if parts[-1] == 'mod' or parts[-1] == 'lib' or parts[-1]=='main':
                parts = parts[:-1]
            files['::'.join(['crate'] + parts)] = p
mods = set(files)
def strip_comments(text):
    """Drops `//` (and so `///`, `//!`) and `/* */` comments: a doc link such as
    [`super::args`] names a module but is no import, so it makes no edge. String and char
    literals are kept whole (a `//` inside "mysql://..." is no comment)."""
    out = []; i = 0; n = len(text)
    while i < n:
        c = text[i]
        if text.startswith('//', i):
            j = text.find('\n', i)
            i = n if j < 0 else j
        elif text.startswith('/*', i):
            depth = 0
            while i < n:
                if text.startswith('/*', i): depth += 1; i += 2
                elif text.startswith('*/', i):
                    depth -= 1; i += 2
                    if depth == 0: break
                else: i += 1
        elif c == 'r' and re.match(r'r#*"', text[i:i + 8]) and not (i and (text[i - 1].isalnum() or text[i - 1] == '_')):
            hashes = re.match(r'r(#*)"', text[i:]).group(1)
            end = text.find('"' + hashes, i + 2 + len(hashes))
            end = n if end < 0 else end + 1 + len(hashes)
            out.append(text[i:end]); i = end
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == '\\' else 1
            out.append(text[i:j + 1]); i = j + 1
        elif c == "'":
            if i + 1 < n and text[i + 1] == '\\':
                j = text.find("'", i + 3)
                j = n if j < 0 else j + 1
            elif i + 2 < n and text[i + 2] == "'":
                j = i + 3
            else:
                j = i + 1  # a lifetime
            out.append(text[i:j]); i = j
        else:
            out.append(c); i += 1
    return ''.join(out)
def resolve(path, cur):
    segs = path.split('::')
    if segs[0] == 'super':
        base = cur.split('::')
        # a file foo.rs (not mod.rs) is module crate::..::foo; super = parent
        while segs and segs[0] == 'super':
            base = base[:-1]; segs = segs[1:]
        segs = base + segs
    elif segs[0] == 'self':
        segs = cur.split('::') + segs[1:]
    elif segs[0] != 'crate':
        return None
    # longest prefix that is a module file
    for n in range(len(segs), 0, -1):
        m = '::'.join(segs[:n])
        if m in mods:
            return m
    return None
edges = {m: set() for m in mods}
for m, p in files.items():
    text = strip_comments(open(p).read())
    text = re.sub(r'#\[cfg\(test\)\]\s*mod tests \{.*', '', text, flags=re.S)
    for u in re.findall(r'\buse\s+([^;]+);', text):
        u = re.sub(r'\s+', '', u)
        # expand braces one level
        mm = re.match(r'^(.*?)::\{(.*)\}$', u)
        paths = []
        if mm:
            pre = mm.group(1)
            depth=0; cur=''; items=[]
            for ch in mm.group(2):
                if ch=='{': depth+=1
                if ch=='}': depth-=1
                if ch==',' and depth==0: items.append(cur); cur=''
                else: cur+=ch
            items.append(cur)
            for it in items:
                it = it.split('::{')[0]
                paths.append(pre + '::' + it if it not in ('self',) else pre)
        else:
            paths.append(u)
        for q in paths:
            q = q.split(' as ')[0]
            t = resolve(q, m)
            if t and t != m and not m.startswith(t + '::') :
                edges[m].add(t)
    for q in re.findall(r'\b((?:crate|super)(?:::[A-Za-z_][A-Za-z0-9_]*)+)', text):
        t = resolve(q, m)
        if t and t != m and not m.startswith(t + '::'):
            edges[m].add(t)
# Tarjan
idx = {}; low = {}; st = []; on = set(); out = []; c = [0]
sys.setrecursionlimit(10000)
def sc(v):
    idx[v] = low[v] = c[0]; c[0] += 1; st.append(v); on.add(v)
    for w in edges[v]:
        if w not in idx: sc(w); low[v] = min(low[v], low[w])
        elif w in on: low[v] = min(low[v], idx[w])
    if low[v] == idx[v]:
        comp = []
        while True:
            w = st.pop(); on.discard(w); comp.append(w)
            if w == v: break
        if len(comp) > 1: out.append(sorted(comp))
for v in sorted(mods):
    if v not in idx: sc(v)
for comp in out:
    print(len(comp), ' <-> '.join(x.replace('crate::', '') for x in comp))
print(len(out), 'circles')
