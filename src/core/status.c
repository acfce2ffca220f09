/* status.c — corun's one error type: messages and names. */
#include "corun/corun.h"

CORUN_API const char *corun_strerror(int status)
{
    switch (status) {
#define CORUN__STATUS_MSG(name, value, msg) \
    case CORUN_##name:                      \
        return msg;
        CORUN_STATUS_MAP(CORUN__STATUS_MSG)
#undef CORUN__STATUS_MSG
    default:
        return "unknown error";
    }
}

CORUN_API const char *corun_status_name(int status)
{
    switch (status) {
#define CORUN__STATUS_NAME(name, value, msg) \
    case CORUN_##name:                       \
        return "CORUN_" #name;
        CORUN_STATUS_MAP(CORUN__STATUS_NAME)
#undef CORUN__STATUS_NAME
    default:
        return "CORUN_UNKNOWN";
    }
}
