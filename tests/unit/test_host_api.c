#include "config.h"
#include "unit.h"
Suite *host_api_suite(void) { return suite_create("host_api"); }
