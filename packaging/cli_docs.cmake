# Man pages and bash completion generated from the help the programs print, so they never
# drift from it (run by packaging/CMakeLists.txt at build time):
#   cmake -DGRUWB=<gruwb> -DGUI=<gru-workbench> -DVERSION=<v> -DDATE=<yyyy-mm-dd> -DOUT=<dir>
#         [-DGZIP=<gzip>] -P cli_docs.cmake
# writes <dir>/man/gruwb.1, gruwb-<command>.1 for every command `gruwb --help` lists,
# gru-workbench.1 (gzipped when GZIP is set) and <dir>/gruwb.bash (the completion).

function(run_help out)
  execute_process(COMMAND ${ARGN} OUTPUT_VARIABLE text RESULT_VARIABLE result ERROR_QUIET)
  if(NOT result EQUAL 0 OR text STREQUAL "")
    string(JOIN " " line ${ARGN})
    message(FATAL_ERROR "cli_docs: '${line}' failed (${result})")
  endif()
  set(${out} "${text}" PARENT_SCOPE)
endfunction()

# Help text -> roff: the "Usage:" block becomes SYNOPSIS, the rest DESCRIPTION with each
# "Heading:" line (column 0) a section; text stays as printed (no-fill), so tables keep their
# columns.
function(write_man path title name summary text)
  string(REPLACE "\\" "\\e" text "${text}")
  string(REPLACE "-" "\\-" text "${text}")
  # A line starting with . or ' would be a roff request.
  string(REGEX REPLACE "(^|\n)([.'])" "\\1\\\\&\\2" text "${text}")
  string(FIND "${text}" "\n\n" usage_end)
  string(SUBSTRING "${text}" 0 ${usage_end} usage)
  math(EXPR rest_start "${usage_end} + 2")
  string(SUBSTRING "${text}" ${rest_start} -1 rest)
  string(REGEX REPLACE "^Usage: " "" usage "${usage}")
  string(REGEX REPLACE "\n       " "\n" usage "${usage}")
  string(REGEX MATCHALL "(^|\n)[A-Z][A-Za-z ()]*:\n" headings "${rest}")
  foreach(heading IN LISTS headings)
    string(STRIP "${heading}" label)
    string(REGEX REPLACE ":$" "" label "${label}")
    string(TOUPPER "${label}" label)
    string(REGEX REPLACE "^\n" "" bare "${heading}")
    string(REPLACE "\n${bare}" "\n.fi\n.SH ${label}\n.nf\n" rest "${rest}")
    if(rest MATCHES "^${bare}")
      string(REGEX REPLACE "^[^\n]*\n" ".fi\n.SH ${label}\n.nf\n" rest "${rest}")
    endif()
  endforeach()
  string(REGEX REPLACE "\n+$" "" rest "${rest}")
  file(WRITE ${path}
       ".TH ${title} 1 \"${DATE}\" \"GRU Workbench\" \"GRU Workbench ${VERSION}\"\n"
       ".SH NAME\n${name} \\- ${summary}\n"
       ".SH SYNOPSIS\n.nf\n${usage}\n.fi\n"
       ".SH DESCRIPTION\n.nf\n${rest}\n.fi\n"
       ".SH SEE ALSO\n${ARGN}\n")
endfunction()

file(MAKE_DIRECTORY ${OUT}/man)
set(pages)
run_help(usage ${GRUWB} --help)
if(NOT usage MATCHES "\nCommands:\n(.*)\n\nOptions:")
  message(FATAL_ERROR "cli_docs: `gruwb --help` lists no commands")
endif()
# A summary's ";" would split the CMake list of rows: held as @SEMICOLON@ meanwhile.
string(REPLACE ";" "@SEMICOLON@" table "${CMAKE_MATCH_1}")
string(REGEX MATCHALL "  [a-z][a-z0-9-]* +[^\n]+" rows "${table}")
set(commands)
set(see_also "gru\\-workbench(1)")
foreach(row IN LISTS rows)
  string(REGEX MATCH "^  ([a-z0-9-]+) +(.*)$" ignored "${row}")
  list(APPEND commands ${CMAKE_MATCH_1})
  string(REPLACE "@SEMICOLON@" ";" summary_${CMAKE_MATCH_1} "${CMAKE_MATCH_2}")
  string(REPLACE "-" "\\-" page "gruwb-${CMAKE_MATCH_1}")
  string(APPEND see_also ",\n${page}(1)")
endforeach()
write_man(${OUT}/man/gruwb.1 GRUWB gruwb
          "inspect, run, train and deploy small recurrent networks" "${usage}" "${see_also}")
list(APPEND pages gruwb.1)

set(completion_cases)
foreach(command IN LISTS commands)
  run_help(help ${GRUWB} help ${command})
  string(TOUPPER "gruwb-${command}" title)
  string(REPLACE "-" "\\-" name "gruwb-${command}")
  write_man(${OUT}/man/gruwb-${command}.1 ${title} ${name} "${summary_${command}}" "${help}"
            "gruwb(1)")
  list(APPEND pages gruwb-${command}.1)
  # Completion: every --option the help names, and the actions of commands whose usage lines
  # read "gruwb COMMAND ACTION ..." (board list, board train, ...) in its Usage block.
  string(REGEX MATCHALL "--[a-z][a-z0-9-]*" options "${help}")
  list(REMOVE_DUPLICATES options)
  list(SORT options)
  string(JOIN " " options ${options})
  string(FIND "${help}" "\n\n" usage_end)
  string(SUBSTRING "${help}" 0 ${usage_end} usage_lines)
  string(REGEX MATCHALL "gruwb ${command} [a-z][a-z0-9-]*" actions "${usage_lines}")
  list(TRANSFORM actions REPLACE "^gruwb ${command} " "")
  list(REMOVE_DUPLICATES actions)
  string(JOIN " " actions ${actions})
  string(APPEND completion_cases "    ${command}) options=\"${options}\" actions=\"${actions}\" ;;\n")
endforeach()

# gru-workbench prints its own path in "Usage:"; the page shows the name.
run_help(gui_help ${CMAKE_COMMAND} -E env QT_QPA_PLATFORM=offscreen ${GUI} --help)
string(REGEX REPLACE "^Usage: [^ \n]*gru-workbench" "Usage: gru-workbench" gui_help "${gui_help}")
# QCommandLineParser puts the description right under the usage line; SYNOPSIS ends there.
string(REGEX REPLACE "^(Usage: [^\n]*\n)" "\\1\n" gui_help "${gui_help}")
write_man(${OUT}/man/gru-workbench.1 GRU-WORKBENCH gru\\-workbench
          "desktop workbench for small recurrent networks on microcontrollers" "${gui_help}"
          "gruwb(1)")
list(APPEND pages gru-workbench.1)

if(GZIP)
  foreach(page IN LISTS pages)
    # -n: no name or time stamp inside, so the package is reproducible.
    execute_process(COMMAND ${GZIP} -9nf ${OUT}/man/${page} RESULT_VARIABLE result)
    if(NOT result EQUAL 0)
      message(FATAL_ERROR "cli_docs: gzip ${page} failed")
    endif()
  endforeach()
endif()

string(JOIN " " command_words ${commands})
file(WRITE ${OUT}/gruwb.bash
"# bash completion for gruwb, generated from its help by packaging/cli_docs.cmake.
_gruwb() {
  local cur=\${COMP_WORDS[COMP_CWORD]} command=\${COMP_WORDS[1]} options= actions=
  if ((COMP_CWORD == 1)); then
    COMPREPLY=($(compgen -W \"${command_words} help --help --version\" -- \"$cur\"))
    return
  fi
  case $command in
    help) ((COMP_CWORD == 2)) && COMPREPLY=($(compgen -W \"${command_words}\" -- \"$cur\"))
      return ;;
${completion_cases}  esac
  if [[ $cur == -* ]]; then
    COMPREPLY=($(compgen -W \"$options\" -- \"$cur\"))
  elif ((COMP_CWORD == 2)) && [[ -n $actions ]]; then
    COMPREPLY=($(compgen -W \"$actions\" -- \"$cur\"))
  fi
  # Otherwise nothing here, and -o default completes file names (models, datasets).
}
complete -o default -F _gruwb gruwb
")
