# SPDX-License-Identifier: MIT
# libFuzzer harnesses (tests/fuzz/README.md).  They are built with clang by
# tests/fuzz/build.sh, not by automake (the tree is built with gcc), and
# are not part of `make check`.  `make fuzz` builds and runs each for
# FUZZ_SECONDS (default 600); CI runs them for 60 s through .ci/run.

.PHONY: fuzz
fuzz:
	$(SHELL) $(srcdir)/tests/fuzz/run.sh $(abs_top_builddir) $${FUZZ_SECONDS:-600}

FUZZ_CORPUS_PROTOCOL = \
	tests/fuzz/corpus/protocol/bad_json \
	tests/fuzz/corpus/protocol/batch \
	tests/fuzz/corpus/protocol/batch_odd \
	tests/fuzz/corpus/protocol/batch_unsupported \
	tests/fuzz/corpus/protocol/blank_lines \
	tests/fuzz/corpus/protocol/calc_basic \
	tests/fuzz/corpus/protocol/calc_edge \
	tests/fuzz/corpus/protocol/cancelled \
	tests/fuzz/corpus/protocol/control_chars \
	tests/fuzz/corpus/protocol/crlf \
	tests/fuzz/corpus/protocol/deep_nesting \
	tests/fuzz/corpus/protocol/deferred \
	tests/fuzz/corpus/protocol/double_initialize \
	tests/fuzz/corpus/protocol/duplicate_keys \
	tests/fuzz/corpus/protocol/hangup \
	tests/fuzz/corpus/protocol/huge_ids \
	tests/fuzz/corpus/protocol/surrogate_leak \
	tests/fuzz/corpus/protocol/init_bad_params \
	tests/fuzz/corpus/protocol/init_handshake \
	tests/fuzz/corpus/protocol/init_old_version \
	tests/fuzz/corpus/protocol/init_unknown_version \
	tests/fuzz/corpus/protocol/invalid_requests \
	tests/fuzz/corpus/protocol/invalid_utf8 \
	tests/fuzz/corpus/protocol/long_method \
	tests/fuzz/corpus/protocol/mirror \
	tests/fuzz/corpus/protocol/no_final_newline \
	tests/fuzz/corpus/protocol/nul_escapes \
	tests/fuzz/corpus/protocol/oversize \
	tests/fuzz/corpus/protocol/oversize_no_newline \
	tests/fuzz/corpus/protocol/ping_before_init \
	tests/fuzz/corpus/protocol/raw_nul \
	tests/fuzz/corpus/protocol/responses \
	tests/fuzz/corpus/protocol/set_level \
	tests/fuzz/corpus/protocol/split_chunks \
	tests/fuzz/corpus/protocol/string_ids \
	tests/fuzz/corpus/protocol/surrogates \
	tests/fuzz/corpus/protocol/tools_call_bad \
	tests/fuzz/corpus/protocol/tools_call_echo \
	tests/fuzz/corpus/protocol/tools_call_progress \
	tests/fuzz/corpus/protocol/tools_list_cursors \
	tests/fuzz/corpus/protocol/typed \
	tests/fuzz/corpus/protocol/batch_content \
	tests/fuzz/corpus/protocol/completion \
	tests/fuzz/corpus/protocol/completion_async \
	tests/fuzz/corpus/protocol/content_before_init \
	tests/fuzz/corpus/protocol/misuse \
	tests/fuzz/corpus/protocol/prompts_get \
	tests/fuzz/corpus/protocol/prompts_get_later \
	tests/fuzz/corpus/protocol/prompts_list \
	tests/fuzz/corpus/protocol/resources_fail \
	tests/fuzz/corpus/protocol/resources_list \
	tests/fuzz/corpus/protocol/resources_read \
	tests/fuzz/corpus/protocol/resources_read_async \
	tests/fuzz/corpus/protocol/resources_read_busy \
	tests/fuzz/corpus/protocol/resources_subscribe \
	tests/fuzz/corpus/protocol/resources_templates_list \
	tests/fuzz/corpus/protocol/subscribe_hangup

FUZZ_CORPUS_ARGUMENTS = \
	tests/fuzz/corpus/arguments/array \
	tests/fuzz/corpus/arguments/bad_json \
	tests/fuzz/corpus/arguments/deep_chain \
	tests/fuzz/corpus/arguments/deep_nesting \
	tests/fuzz/corpus/arguments/deep_objects \
	tests/fuzz/corpus/arguments/duplicate_keys \
	tests/fuzz/corpus/arguments/enum_values \
	tests/fuzz/corpus/arguments/extra_key \
	tests/fuzz/corpus/arguments/kitchen_sink \
	tests/fuzz/corpus/arguments/kitchen_sink_bad \
	tests/fuzz/corpus/arguments/long_key \
	tests/fuzz/corpus/arguments/long_key_cut \
	tests/fuzz/corpus/arguments/many_keys \
	tests/fuzz/corpus/arguments/missing_text \
	tests/fuzz/corpus/arguments/nested_arrays \
	tests/fuzz/corpus/arguments/null \
	tests/fuzz/corpus/arguments/number \
	tests/fuzz/corpus/arguments/numbers \
	tests/fuzz/corpus/arguments/numbers_bad \
	tests/fuzz/corpus/arguments/required_empty_key \
	tests/fuzz/corpus/arguments/text \
	tests/fuzz/corpus/arguments/text_empty \
	tests/fuzz/corpus/arguments/text_escapes \
	tests/fuzz/corpus/arguments/text_invalid_utf8 \
	tests/fuzz/corpus/arguments/text_lone_surrogate \
	tests/fuzz/corpus/arguments/text_nul \
	tests/fuzz/corpus/arguments/text_raw_control \
	tests/fuzz/corpus/arguments/text_surrogate_pair \
	tests/fuzz/corpus/arguments/text_utf8 \
	tests/fuzz/corpus/arguments/text_wrong_type \
	tests/fuzz/corpus/arguments/trailing \
	tests/fuzz/corpus/arguments/whitespace

FUZZ_CORPUS_URITPL = \
	tests/fuzz/corpus/uritpl/adjacent \
	tests/fuzz/corpus/uritpl/backtracking \
	tests/fuzz/corpus/uritpl/backtracking_slashes \
	tests/fuzz/corpus/uritpl/empty \
	tests/fuzz/corpus/uritpl/empty_uri \
	tests/fuzz/corpus/uritpl/empty_value \
	tests/fuzz/corpus/uritpl/explode \
	tests/fuzz/corpus/uritpl/fragment \
	tests/fuzz/corpus/uritpl/item \
	tests/fuzz/corpus/uritpl/label \
	tests/fuzz/corpus/uritpl/literal_only \
	tests/fuzz/corpus/uritpl/max_parts \
	tests/fuzz/corpus/uritpl/name_chars \
	tests/fuzz/corpus/uritpl/nested \
	tests/fuzz/corpus/uritpl/no_variable \
	tests/fuzz/corpus/uritpl/no_variable_op \
	tests/fuzz/corpus/uritpl/op_query \
	tests/fuzz/corpus/uritpl/path_segment \
	tests/fuzz/corpus/uritpl/percent_bad \
	tests/fuzz/corpus/uritpl/percent_cut \
	tests/fuzz/corpus/uritpl/percent_not_utf8 \
	tests/fuzz/corpus/uritpl/percent_nul \
	tests/fuzz/corpus/uritpl/percent_utf8 \
	tests/fuzz/corpus/uritpl/prefix \
	tests/fuzz/corpus/uritpl/reserved \
	tests/fuzz/corpus/uritpl/several_vars \
	tests/fuzz/corpus/uritpl/slash_in_simple \
	tests/fuzz/corpus/uritpl/stray_close \
	tests/fuzz/corpus/uritpl/too_many_parts \
	tests/fuzz/corpus/uritpl/twice \
	tests/fuzz/corpus/uritpl/unclosed \
	tests/fuzz/corpus/uritpl/utf8_literal

EXTRA_DIST += \
	tests/fuzz/README.md \
	tests/fuzz/build.sh \
	tests/fuzz/run.sh \
	tests/fuzz/fuzz_common.h \
	tests/fuzz/fuzz_common.c \
	tests/fuzz/fuzz_protocol.c \
	tests/fuzz/fuzz_arguments.c \
	tests/fuzz/fuzz_uritpl.c \
	tests/fuzz/fuzz_plugin.c \
	$(FUZZ_CORPUS_PROTOCOL) \
	$(FUZZ_CORPUS_ARGUMENTS) \
	$(FUZZ_CORPUS_URITPL)
