# Writes OUT, a C file defining SYMBOL, from the contents of IN.
#   MODE=text   const char *SYMBOL(void)           (NUL-terminated text)
#   MODE=binary const unsigned char *SYMBOL(size_t *len)
# Run with cmake -DIN=... -DOUT=... -DSYMBOL=... [-DMODE=...] -P embed.cmake
if(NOT MODE)
  set(MODE text)
endif()
file(READ "${IN}" hex HEX)
string(LENGTH "${hex}" nhex)
math(EXPR nbytes "${nhex} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
if(MODE STREQUAL "binary")
  file(WRITE "${OUT}" "/* generated from ${IN}; do not edit */\n#include <stddef.h>\n"
       "static const unsigned char data[] __attribute__((aligned(16))) = {${bytes} 0};\n"
       "const unsigned char *${SYMBOL}(size_t *len);\n"
       "const unsigned char *${SYMBOL}(size_t *len) { *len = ${nbytes}; return data; }\n")
else()
  file(WRITE "${OUT}" "/* generated from ${IN}; do not edit */\n"
       "static const char text[] = {${bytes} 0};\n"
       "const char *${SYMBOL}(void);\n"
       "const char *${SYMBOL}(void) { return text; }\n")
endif()
