# The memory, barrier and branch lines of the SASS of the functions whose
# names contain any of the given words: python3 sass_lines.py FILE.sass WORD...
# (FILE.sass from cuobjdump -sass; used by the transpose experiments.)
import re,sys
s=open(sys.argv[1]).read()
parts=re.split(r'\n\s*Function : ',s)
for p in parts[1:]:
    name=p.split('\n',1)[0]
    if not any(k in name for k in sys.argv[2:]): continue
    print('=====',name)
    for line in p.split('\n'):
        m=re.search(r'/\*([0-9a-f]{4})\*/\s+(.*?);',line)
        if m and re.search(r'LDG|STG|ATOM|BAR|STS|LDS|RED|EXIT|BRA|S2R|DEPBAR',m.group(2)):
            print(m.group(1), m.group(2))
