# see tests/local.mk
