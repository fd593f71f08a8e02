#include "config.h"
#include "unit.h"
Suite *remote_suite(void) { return suite_create("remote"); }
