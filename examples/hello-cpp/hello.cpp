/* SPDX-License-Identifier: MIT */
// hello.cpp -- an mcpd plugin in C++: one tool that greets by name, built
// from the same sdk/mcpd.h as a C plugin.  The tables are designated
// initializers, as in C; C++ wants their fields in the order mcpd.h
// declares them.  Exceptions must not leave a callback: mcpd is C, and an
// exception thrown through it ends the process.
#include <mcpd.h>

#include <exception>
#include <string>

namespace {

int hello(mcpd_call *call, const mcpd_request *req) {
  try {
    json_object *name = json_object_object_get(req->arguments, "name");
    const std::string text =
        "Hello, " + std::string(json_object_get_string(name)) + "!";
    return req->host->result_text(call, text.c_str());
  } catch (const std::exception &e) {
    return req->host->fail(call, MCPD_ERR_INTERNAL, "hello: %s", e.what());
  }
}

const mcpd_tool tools[] = {
    {.name = "hello_cpp",
     .description = "Greets someone by name, from C++.",
     .input_schema = "{\"type\":\"object\",\"required\":[\"name\"],"
                     "\"properties\":{\"name\":{\"type\":\"string\"}}}",
     .call = hello},
    MCPD_TOOL_END,
};

} // namespace

MCPD_PLUGIN_DEFINE(.name = "hello_cpp", .version = "1.0",
                   .description = "The C++ example.", .tools = tools);
