#ifndef FOB_CSYSTEMD_SHIM_H
#define FOB_CSYSTEMD_SHIM_H
// sd-bus (Debian libsystemd-dev): the D-Bus library of the Secret Service
// provider fob-secret-service. It needs no running systemd, only a bus.
#include <systemd/sd-bus.h>
#endif
