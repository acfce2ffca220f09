/* settings_api.c — corun_setting_get: one setting, for code outside libcorun. */
#include "core/settings.h"
#include "corun/corun.h"

int corun_setting_get(const char *name, char *buf, size_t len)
{
    if (name == NULL || buf == NULL) {
        return CORUN_EINVAL;
    }
    return corun__settings_read_one(name, buf, len, NULL, 0);
}
