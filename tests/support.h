/* support.h — helpers shared by the unit tests. cmocka's headers need the
 * standard headers first, in this order. */
#ifndef CORUN_TESTS_SUPPORT_H
#define CORUN_TESTS_SUPPORT_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

/* Path of a file in the source tree, in a static buffer. */
const char *corun_test_path(const char *rel);

#endif
