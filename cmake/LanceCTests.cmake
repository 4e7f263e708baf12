# lance_c_add_test: the one way a test is registered (tests/CMakeLists.txt
# includes this file; tests/README.md maps the folders and files to lance.h's
# sections).
#
#   lance_c_add_test(<name>
#     [SOURCES <file>...]     the program <name> is built from these
#     [COMMAND <arg>...]      what the test runs; default: the program <name>
#     [ARGS <arg>...]         appended to the command
#     [LIBS <lib>...]         the program's libraries; default: lance_test_util lance_c
#     [DEFINES <def>...] [LINK_OPTIONS <flag>...]
#     [NOT_PEDANTIC | NO_WARNINGS]  default: ${_warnings} -pedantic
#     [TIMEOUT <s>] [ENV <VAR=value>...] [LABELS <label>...]
#     [RESOURCE_LOCK <name>...] [RUN_SERIAL])
#
# Wherever it is called from, a test runs in the top of the build tree and
# its program is built there (the root sets CMAKE_RUNTIME_OUTPUT_DIRECTORY),
# so build/<name> is the program of test <name>.  SOURCES are relative to
# the calling folder.
# LABELS, for ctest -L/-LE (docs/testing.md "Labels"): needs-root (network or
# mount namespaces), stores (the object-store servers and emulators),
# sanitizers (ASan/UBSan, valgrind).  COST comes from LANCE_C_TEST_COSTS (a
# list of name and seconds pairs, tests/CMakeLists.txt), and with it the
# label slow (30 s or more); lance_c_check_test_costs() then fails the
# configure when the list names a test that was never registered.
function(lance_c_add_test name)
  cmake_parse_arguments(PARSE_ARGV 1 T "NOT_PEDANTIC;NO_WARNINGS;RUN_SERIAL" "TIMEOUT"
                        "SOURCES;COMMAND;ARGS;LIBS;DEFINES;LINK_OPTIONS;ENV;LABELS;RESOURCE_LOCK")
  if(T_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "lance_c_add_test(${name}): unknown arguments ${T_UNPARSED_ARGUMENTS}")
  endif()
  if(T_SOURCES)
    add_executable(${name} ${T_SOURCES})
    if(NOT T_LIBS)
      set(T_LIBS lance_test_util lance_c)
    endif()
    target_link_libraries(${name} PRIVATE ${T_LIBS})
    if(T_NO_WARNINGS)
    elseif(T_NOT_PEDANTIC)
      target_compile_options(${name} PRIVATE ${_warnings})
    else()
      target_compile_options(${name} PRIVATE ${_warnings} -pedantic)
    endif()
    if(T_DEFINES)
      target_compile_definitions(${name} PRIVATE ${T_DEFINES})
    endif()
    if(T_LINK_OPTIONS)
      target_link_options(${name} PRIVATE ${T_LINK_OPTIONS})
    endif()
  endif()
  if(NOT T_COMMAND)
    if(NOT T_SOURCES)
      message(FATAL_ERROR "lance_c_add_test(${name}): neither SOURCES nor COMMAND")
    endif()
    set(T_COMMAND ${name})
  endif()
  add_test(NAME ${name} COMMAND ${T_COMMAND} ${T_ARGS} WORKING_DIRECTORY ${PROJECT_BINARY_DIR})
  set_property(GLOBAL APPEND PROPERTY LANCE_C_TESTS ${name})
  if(T_TIMEOUT)
    set_tests_properties(${name} PROPERTIES TIMEOUT ${T_TIMEOUT})
  endif()
  if(T_ENV)
    set_tests_properties(${name} PROPERTIES ENVIRONMENT "${T_ENV}")
  endif()
  if(T_LABELS)
    set_tests_properties(${name} PROPERTIES LABELS "${T_LABELS}")
  endif()
  if(T_RESOURCE_LOCK)
    set_tests_properties(${name} PROPERTIES RESOURCE_LOCK "${T_RESOURCE_LOCK}")
  endif()
  if(T_RUN_SERIAL)
    set_tests_properties(${name} PROPERTIES RUN_SERIAL TRUE)
  endif()
  list(FIND LANCE_C_TEST_COSTS ${name} _at)
  if(_at GREATER_EQUAL 0)
    math(EXPR _at "${_at} + 1")
    list(GET LANCE_C_TEST_COSTS ${_at} _seconds)
    set_tests_properties(${name} PROPERTIES COST ${_seconds})
    # Label slow: 30 s or more in that run (docs/testing.md "Labels").
    if(_seconds GREATER_EQUAL 30)
      set_property(TEST ${name} APPEND PROPERTY LABELS slow)
    endif()
  endif()
endfunction()

# Every test LANCE_C_TEST_COSTS names was registered (a renamed or removed
# test must leave the list too).  Called once, after the last test.
function(lance_c_check_test_costs)
  get_property(_registered GLOBAL PROPERTY LANCE_C_TESTS)
  set(_costs ${LANCE_C_TEST_COSTS})
  while(_costs)
    list(POP_FRONT _costs _name _seconds)
    if(NOT _name IN_LIST _registered)
      message(FATAL_ERROR "LANCE_C_TEST_COSTS names ${_name}, which no lance_c_add_test() registers")
    endif()
  endwhile()
endfunction()
