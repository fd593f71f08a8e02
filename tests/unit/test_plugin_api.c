#include "config.h"
#include "unit.h"
Suite *plugin_api_suite(void) { return suite_create("plugin_api"); }
