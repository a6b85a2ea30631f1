# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_todo_global_optspecs
    string join /n json y/yes context= read-only db= report h/help V/version
end

function __fish_todo_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_todo_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_todo_using_subcommand
    set -l cmd (__fish_todo_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c todo -n "__fish_todo_needs_command" -l context -d 'Run in this runtime context (see `contexts`)' -r
complete -c todo -n "__fish_todo_needs_command" -l db -d 'SQLite database file, or :memory: (the default)' -r
complete -c todo -n "__fish_todo_needs_command" -l json -d 'Print results as JSON: the CommandResult exactly as MCP clients get it'
complete -c todo -n "__fish_todo_needs_command" -s y -l yes -d 'Answer yes to confirmation prompts'
complete -c todo -n "__fish_todo_needs_command" -l read-only -d 'Enter the context read-only: commands that change state are refused'
complete -c todo -n "__fish_todo_needs_command" -l report -d 'Print the context cost of each strategy (tools and o200k tokens) and exit'
complete -c todo -n "__fish_todo_needs_command" -s h -l help -d 'Print help'
complete -c todo -n "__fish_todo_needs_command" -s V -l version -d 'Print version'
complete -c todo -n "__fish_todo_needs_command" -f -a "call" -d 'Call a command: `call <command> --field value ...`'
complete -c todo -n "__fish_todo_needs_command" -f -a "commands" -d 'List the commands, or search them (ranked as afd-discover)'
complete -c todo -n "__fish_todo_needs_command" -f -a "describe" -d 'Show a command/'s full definition and its flags'
complete -c todo -n "__fish_todo_needs_command" -f -a "batch" -d 'Run several commands from a JSON file (afd-batch/'s input; /'-/': stdin)'
complete -c todo -n "__fish_todo_needs_command" -f -a "pipe" -d 'Run a pipeline from a JSON file (afd-pipe/'s input; /'-/': stdin)'
complete -c todo -n "__fish_todo_needs_command" -f -a "contexts" -d 'List the runtime contexts'
complete -c todo -n "__fish_todo_needs_command" -f -a "completions" -d 'Print a shell completion script'
complete -c todo -n "__fish_todo_needs_command" -f -a "serve" -d 'Serve the commands to MCP clients (stdio unless --http is given)'
complete -c todo -n "__fish_todo_needs_command" -f -a "todo-clear" -d 'Clear all completed todos (asks for confirmation)'
complete -c todo -n "__fish_todo_needs_command" -f -a "todo-create" -d 'Create a new todo item'
complete -c todo -n "__fish_todo_needs_command" -f -a "todo-create-batch" -d 'Create several todos at once; each succeeds or fails on its own'
complete -c todo -n "__fish_todo_needs_command" -f -a "todo-delete" -d 'Delete a todo permanently (asks for confirmation)'
complete -c todo -n "__fish_todo_needs_command" -f -a "todo-delete-batch" -d 'Delete several todos at once; unknown ids are reported, the rest deleted (asks for confirmation)'
complete -c todo -n "__fish_todo_needs_command" -f -a "todo-get" -d 'Get a single todo by id'
complete -c todo -n "__fish_todo_needs_command" -f -a "todo-list" -d 'List todos with filtering, sorting and pagination'
complete -c todo -n "__fish_todo_needs_command" -f -a "todo-stats" -d 'Get todo statistics: totals, completion and counts by priority'
complete -c todo -n "__fish_todo_needs_command" -f -a "todo-toggle" -d 'Toggle a todo between completed and pending'
complete -c todo -n "__fish_todo_needs_command" -f -a "todo-toggle-batch" -d 'Toggle several todos at once, or set them all to one state'
complete -c todo -n "__fish_todo_needs_command" -f -a "todo-update" -d 'Update a todo/'s fields'
complete -c todo -n "__fish_todo_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c todo -n "__fish_todo_using_subcommand call; and not __fish_seen_subcommand_from todo-clear todo-create todo-create-batch todo-delete todo-delete-batch todo-get todo-list todo-stats todo-toggle todo-toggle-batch todo-update help" -l context -d 'Run in this runtime context (see `contexts`)' -r
complete -c todo -n "__fish_todo_using_subcommand call; and not __fish_seen_subcommand_from todo-clear todo-create todo-create-batch todo-delete todo-delete-batch todo-get todo-list todo-stats todo-toggle todo-toggle-batch todo-update help" -l db -d 'SQLite database file, or :memory: (the default)' -r
complete -c todo -n "__fish_todo_using_subcommand call; and not __fish_seen_subcommand_from todo-clear todo-create todo-create-batch todo-delete todo-delete-batch todo-get todo-list todo-stats todo-toggle todo-toggle-batch todo-update help" -l json -d 'Print results as JSON: the CommandResult exactly as MCP clients get it'
complete -c todo -n "__fish_todo_using_subcommand call; and not __fish_seen_subcommand_from todo-clear todo-create todo-create-batch todo-delete todo-delete-batch todo-get todo-list todo-stats todo-toggle todo-toggle-batch todo-update help" -s y -l yes -d 'Answer yes to confirmation prompts'
complete -c todo -n "__fish_todo_using_subcommand call; and not __fish_seen_subcommand_from todo-clear todo-create todo-create-batch todo-delete todo-delete-batch todo-get todo-list todo-stats todo-toggle todo-toggle-batch todo-update help" -l read-only -d 'Enter the context read-only: commands that change state are refused'
complete -c todo -n "__fish_todo_using_subcommand call; and not __fish_seen_subcommand_from todo-clear todo-create todo-create-batch todo-delete todo-delete-batch todo-get todo-list todo-stats todo-toggle todo-toggle-batch todo-update help" -l report -d 'Print the context cost of each strategy (tools and o200k tokens) and exit'
complete -c todo -n "__fish_todo_using_subcommand call; and not __fish_seen_subcommand_from todo-clear todo-create todo-create-batch todo-delete todo-delete-batch todo-get todo-list todo-stats todo-toggle todo-toggle-batch todo-update help" -s h -l help -d 'Print help'
complete -c todo -n "__fish_todo_using_subcommand call; and not __fish_seen_subcommand_from todo-clear todo-create todo-create-batch todo-delete todo-delete-batch todo-get todo-list todo-stats todo-toggle todo-toggle-batch todo-update help" -f -a "todo-clear" -d 'Clear all completed todos (asks for confirmation)'
complete -c todo -n "__fish_todo_using_subcommand call; and not __fish_seen_subcommand_from todo-clear todo-create todo-create-batch todo-delete todo-delete-batch todo-get todo-list todo-stats todo-toggle todo-toggle-batch todo-update help" -f -a "todo-create" -d 'Create a new todo item'
complete -c todo -n "__fish_todo_using_subcommand call; and not __fish_seen_subcommand_from todo-clear todo-create todo-create-batch todo-delete todo-delete-batch todo-get todo-list todo-stats todo-toggle todo-toggle-batch todo-update help" -f -a "todo-create-batch" -d 'Create several todos at once; each succeeds or fails on its own'
complete -c todo -n "__fish_todo_using_subcommand call; and not __fish_seen_subcommand_from todo-clear todo-create todo-create-batch todo-delete todo-delete-batch todo-get todo-list todo-stats todo-toggle todo-toggle-batch todo-update help" -f -a "todo-delete" -d 'Delete a todo permanently (asks for confirmation)'
complete -c todo -n "__fish_todo_using_subcommand call; and not __fish_seen_subcommand_from todo-clear todo-create todo-create-batch todo-delete todo-delete-batch todo-get todo-list todo-stats todo-toggle todo-toggle-batch todo-update help" -f -a "todo-delete-batch" -d 'Delete several todos at once; unknown ids are reported, the rest deleted (asks for confirmation)'
complete -c todo -n "__fish_todo_using_subcommand call; and not __fish_seen_subcommand_from todo-clear todo-create todo-create-batch todo-delete todo-delete-batch todo-get todo-list todo-stats todo-toggle todo-toggle-batch todo-update help" -f -a "todo-get" -d 'Get a single todo by id'
complete -c todo -n "__fish_todo_using_subcommand call; and not __fish_seen_subcommand_from todo-clear todo-create todo-create-batch todo-delete todo-delete-batch todo-get todo-list todo-stats todo-toggle todo-toggle-batch todo-update help" -f -a "todo-list" -d 'List todos with filtering, sorting and pagination'
complete -c todo -n "__fish_todo_using_subcommand call; and not __fish_seen_subcommand_from todo-clear todo-create todo-create-batch todo-delete todo-delete-batch todo-get todo-list todo-stats todo-toggle todo-toggle-batch todo-update help" -f -a "todo-stats" -d 'Get todo statistics: totals, completion and counts by priority'
complete -c todo -n "__fish_todo_using_subcommand call; and not __fish_seen_subcommand_from todo-clear todo-create todo-create-batch todo-delete todo-delete-batch todo-get todo-list todo-stats todo-toggle todo-toggle-batch todo-update help" -f -a "todo-toggle" -d 'Toggle a todo between completed and pending'
complete -c todo -n "__fish_todo_using_subcommand call; and not __fish_seen_subcommand_from todo-clear todo-create todo-create-batch todo-delete todo-delete-batch todo-get todo-list todo-stats todo-toggle todo-toggle-batch todo-update help" -f -a "todo-toggle-batch" -d 'Toggle several todos at once, or set them all to one state'
complete -c todo -n "__fish_todo_using_subcommand call; and not __fish_seen_subcommand_from todo-clear todo-create todo-create-batch todo-delete todo-delete-batch todo-get todo-list todo-stats todo-toggle todo-toggle-batch todo-update help" -f -a "todo-update" -d 'Update a todo/'s fields'
complete -c todo -n "__fish_todo_using_subcommand call; and not __fish_seen_subcommand_from todo-clear todo-create todo-create-batch todo-delete todo-delete-batch todo-get todo-list todo-stats todo-toggle todo-toggle-batch todo-update help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from todo-clear" -l input-json -d 'The whole input as a JSON object (flags given too override its fields)' -r
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from todo-clear" -l input-file -d 'The whole input from a JSON file (/'-/': standard input)' -r -F
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from todo-clear" -l context -d 'Run in this runtime context (see `contexts`)' -r
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from todo-clear" -l db -d 'SQLite database file, or :memory: (the default)' -r
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from todo-clear" -l json -d 'Print results as JSON: the CommandResult exactly as MCP clients get it'
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from todo-clear" -s y -l yes -d 'Answer yes to confirmation prompts'
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from todo-clear" -l read-only -d 'Enter the context read-only: commands that change state are refused'
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from todo-clear" -l report -d 'Print the context cost of each strategy (tools and o200k tokens) and exit'
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from todo-clear" -s h -l help -d 'Print help (see more with /'--help/')'
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from todo-create" -l title -d 'What to do.' -r
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from todo-create" -l description -d 'More detail.' -r
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from todo-create" -l priority -d 'How urgent (default: medium). [default: medium]' -r -f -a "low/t''
medium/t''
high/t''"
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from todo-create" -l input-json -d 'The whole input as a JSON object (flags given too override its fields)' -r
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from todo-create" -l input-file -d 'The whole input from a JSON file (/'-/': standard input)' -r -F
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from todo-create" -l context -d 'Run in this runtime context (see `contexts`)' -r
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from todo-create" -l db -d 'SQLite database file, or :memory: (the default)' -r
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from todo-create" -l json -d 'Print results as JSON: the CommandResult exactly as MCP clients get it'
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from todo-create" -s y -l yes -d 'Answer yes to confirmation prompts'
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from todo-create" -l read-only -d 'Enter the context read-only: commands that change state are refused'
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from todo-create" -l report -d 'Print the context cost of each strategy (tools and o200k tokens) and exit'
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from todo-create" -s h -l help -d 'Print help (see more with /'--help/')'
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from todo-create-batch" -l todos -d 'The todos to create.' -r
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from todo-create-batch" -l input-json -d 'The whole input as a JSON object (flags given too override its fields)' -r
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from todo-create-batch" -l input-file -d 'The whole input from a JSON file (/'-/': standard input)' -r -F
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from todo-create-batch" -l context -d 'Run in this runtime context (see `contexts`)' -r
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from todo-create-batch" -l db -d 'SQLite database file, or :memory: (the default)' -r
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from todo-create-batch" -l json -d 'Print results as JSON: the CommandResult exactly as MCP clients get it'
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from todo-create-batch" -s y -l yes -d 'Answer yes to confirmation prompts'
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from todo-create-batch" -l read-only -d 'Enter the context read-only: commands that change state are refused'
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from todo-create-batch" -l report -d 'Print the context cost of each strategy (tools and o200k tokens) and exit'
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from todo-create-batch" -s h -l help -d 'Print help (see more with /'--help/')'
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from todo-delete" -l id -d 'The todo/'s id.' -r
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from todo-delete" -l input-json -d 'The whole input as a JSON object (flags given too override its fields)' -r
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from todo-delete" -l input-file -d 'The whole input from a JSON file (/'-/': standard input)' -r -F
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from todo-delete" -l context -d 'Run in this runtime context (see `contexts`)' -r
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from todo-delete" -l db -d 'SQLite database file, or :memory: (the default)' -r
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from todo-delete" -l json -d 'Print results as JSON: the CommandResult exactly as MCP clients get it'
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from todo-delete" -s y -l yes -d 'Answer yes to confirmation prompts'
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from todo-delete" -l read-only -d 'Enter the context read-only: commands that change state are refused'
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from todo-delete" -l report -d 'Print the context cost of each strategy (tools and o200k tokens) and exit'
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from todo-delete" -s h -l help -d 'Print help (see more with /'--help/')'
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from todo-delete-batch" -l ids -d 'The todos/' ids.' -r
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from todo-delete-batch" -l input-json -d 'The whole input as a JSON object (flags given too override its fields)' -r
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from todo-delete-batch" -l input-file -d 'The whole input from a JSON file (/'-/': standard input)' -r -F
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from todo-delete-batch" -l context -d 'Run in this runtime context (see `contexts`)' -r
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from todo-delete-batch" -l db -d 'SQLite database file, or :memory: (the default)' -r
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from todo-delete-batch" -l json -d 'Print results as JSON: the CommandResult exactly as MCP clients get it'
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from todo-delete-batch" -s y -l yes -d 'Answer yes to confirmation prompts'
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from todo-delete-batch" -l read-only -d 'Enter the context read-only: commands that change state are refused'
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from todo-delete-batch" -l report -d 'Print the context cost of each strategy (tools and o200k tokens) and exit'
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from todo-delete-batch" -s h -l help -d 'Print help (see more with /'--help/')'
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from todo-get" -l id -d 'The todo/'s id.' -r
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from todo-get" -l input-json -d 'The whole input as a JSON object (flags given too override its fields)' -r
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from todo-get" -l input-file -d 'The whole input from a JSON file (/'-/': standard input)' -r -F
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from todo-get" -l context -d 'Run in this runtime context (see `contexts`)' -r
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from todo-get" -l db -d 'SQLite database file, or :memory: (the default)' -r
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from todo-get" -l json -d 'Print results as JSON: the CommandResult exactly as MCP clients get it'
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from todo-get" -s y -l yes -d 'Answer yes to confirmation prompts'
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from todo-get" -l read-only -d 'Enter the context read-only: commands that change state are refused'
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from todo-get" -l report -d 'Print the context cost of each strategy (tools and o200k tokens) and exit'
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from todo-get" -s h -l help -d 'Print help (see more with /'--help/')'
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from todo-list" -l completed -d 'Only completed (true) or pending (false) todos.' -r
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from todo-list" -l priority -d 'Only this priority.' -r -f -a "low/t''
medium/t''
high/t''"
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from todo-list" -l search -d 'Text to find in the title or description.' -r
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from todo-list" -l sort-by -d 'Sort field (default: createdAt).' -r -f -a "createdAt/t''
updatedAt/t''
priority/t''
title/t''"
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from todo-list" -l sort-order -d 'Sort direction (default: desc).' -r -f -a "asc/t''
desc/t''"
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from todo-list" -l limit -d 'Page size, 1 to 100 (default 20). [default: 20]' -r
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from todo-list" -l offset -d 'Todos to skip (default 0). [default: 0]' -r
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from todo-list" -l input-json -d 'The whole input as a JSON object (flags given too override its fields)' -r
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from todo-list" -l input-file -d 'The whole input from a JSON file (/'-/': standard input)' -r -F
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from todo-list" -l context -d 'Run in this runtime context (see `contexts`)' -r
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from todo-list" -l db -d 'SQLite database file, or :memory: (the default)' -r
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from todo-list" -l json -d 'Print results as JSON: the CommandResult exactly as MCP clients get it'
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from todo-list" -s y -l yes -d 'Answer yes to confirmation prompts'
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from todo-list" -l read-only -d 'Enter the context read-only: commands that change state are refused'
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from todo-list" -l report -d 'Print the context cost of each strategy (tools and o200k tokens) and exit'
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from todo-list" -s h -l help -d 'Print help (see more with /'--help/')'
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from todo-stats" -l input-json -d 'The whole input as a JSON object (flags given too override its fields)' -r
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from todo-stats" -l input-file -d 'The whole input from a JSON file (/'-/': standard input)' -r -F
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from todo-stats" -l context -d 'Run in this runtime context (see `contexts`)' -r
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from todo-stats" -l db -d 'SQLite database file, or :memory: (the default)' -r
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from todo-stats" -l json -d 'Print results as JSON: the CommandResult exactly as MCP clients get it'
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from todo-stats" -s y -l yes -d 'Answer yes to confirmation prompts'
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from todo-stats" -l read-only -d 'Enter the context read-only: commands that change state are refused'
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from todo-stats" -l report -d 'Print the context cost of each strategy (tools and o200k tokens) and exit'
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from todo-stats" -s h -l help -d 'Print help (see more with /'--help/')'
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from todo-toggle" -l id -d 'The todo/'s id.' -r
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from todo-toggle" -l input-json -d 'The whole input as a JSON object (flags given too override its fields)' -r
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from todo-toggle" -l input-file -d 'The whole input from a JSON file (/'-/': standard input)' -r -F
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from todo-toggle" -l context -d 'Run in this runtime context (see `contexts`)' -r
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from todo-toggle" -l db -d 'SQLite database file, or :memory: (the default)' -r
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from todo-toggle" -l json -d 'Print results as JSON: the CommandResult exactly as MCP clients get it'
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from todo-toggle" -s y -l yes -d 'Answer yes to confirmation prompts'
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from todo-toggle" -l read-only -d 'Enter the context read-only: commands that change state are refused'
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from todo-toggle" -l report -d 'Print the context cost of each strategy (tools and o200k tokens) and exit'
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from todo-toggle" -s h -l help -d 'Print help (see more with /'--help/')'
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from todo-toggle-batch" -l ids -d 'The todos/' ids.' -r
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from todo-toggle-batch" -l completed -d 'Set every todo to this state instead of flipping each.' -r
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from todo-toggle-batch" -l input-json -d 'The whole input as a JSON object (flags given too override its fields)' -r
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from todo-toggle-batch" -l input-file -d 'The whole input from a JSON file (/'-/': standard input)' -r -F
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from todo-toggle-batch" -l context -d 'Run in this runtime context (see `contexts`)' -r
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from todo-toggle-batch" -l db -d 'SQLite database file, or :memory: (the default)' -r
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from todo-toggle-batch" -l json -d 'Print results as JSON: the CommandResult exactly as MCP clients get it'
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from todo-toggle-batch" -s y -l yes -d 'Answer yes to confirmation prompts'
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from todo-toggle-batch" -l read-only -d 'Enter the context read-only: commands that change state are refused'
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from todo-toggle-batch" -l report -d 'Print the context cost of each strategy (tools and o200k tokens) and exit'
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from todo-toggle-batch" -s h -l help -d 'Print help (see more with /'--help/')'
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from todo-update" -l id -d 'The todo/'s id.' -r
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from todo-update" -l title -d 'New title.' -r
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from todo-update" -l description -d 'New description.' -r
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from todo-update" -l priority -d 'New priority.' -r -f -a "low/t''
medium/t''
high/t''"
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from todo-update" -l completed -d 'New completion state.' -r
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from todo-update" -l input-json -d 'The whole input as a JSON object (flags given too override its fields)' -r
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from todo-update" -l input-file -d 'The whole input from a JSON file (/'-/': standard input)' -r -F
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from todo-update" -l context -d 'Run in this runtime context (see `contexts`)' -r
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from todo-update" -l db -d 'SQLite database file, or :memory: (the default)' -r
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from todo-update" -l json -d 'Print results as JSON: the CommandResult exactly as MCP clients get it'
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from todo-update" -s y -l yes -d 'Answer yes to confirmation prompts'
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from todo-update" -l read-only -d 'Enter the context read-only: commands that change state are refused'
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from todo-update" -l report -d 'Print the context cost of each strategy (tools and o200k tokens) and exit'
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from todo-update" -s h -l help -d 'Print help (see more with /'--help/')'
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from help" -f -a "todo-clear" -d 'Clear all completed todos (asks for confirmation)'
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from help" -f -a "todo-create" -d 'Create a new todo item'
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from help" -f -a "todo-create-batch" -d 'Create several todos at once; each succeeds or fails on its own'
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from help" -f -a "todo-delete" -d 'Delete a todo permanently (asks for confirmation)'
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from help" -f -a "todo-delete-batch" -d 'Delete several todos at once; unknown ids are reported, the rest deleted (asks for confirmation)'
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from help" -f -a "todo-get" -d 'Get a single todo by id'
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from help" -f -a "todo-list" -d 'List todos with filtering, sorting and pagination'
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from help" -f -a "todo-stats" -d 'Get todo statistics: totals, completion and counts by priority'
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from help" -f -a "todo-toggle" -d 'Toggle a todo between completed and pending'
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from help" -f -a "todo-toggle-batch" -d 'Toggle several todos at once, or set them all to one state'
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from help" -f -a "todo-update" -d 'Update a todo/'s fields'
complete -c todo -n "__fish_todo_using_subcommand call; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c todo -n "__fish_todo_using_subcommand commands" -l category -d 'Only this category' -r
complete -c todo -n "__fish_todo_using_subcommand commands" -l tag -d 'Only commands with this tag (repeat for several: all must match)' -r
complete -c todo -n "__fish_todo_using_subcommand commands" -l search -d 'Search words, best matches first (repeat for up to 3 phrasings of one request, ranked together)' -r
complete -c todo -n "__fish_todo_using_subcommand commands" -l limit -d 'At most this many commands [default: all, or 10 when searching]' -r
complete -c todo -n "__fish_todo_using_subcommand commands" -l context -d 'Run in this runtime context (see `contexts`)' -r
complete -c todo -n "__fish_todo_using_subcommand commands" -l db -d 'SQLite database file, or :memory: (the default)' -r
complete -c todo -n "__fish_todo_using_subcommand commands" -l json -d 'Print results as JSON: the CommandResult exactly as MCP clients get it'
complete -c todo -n "__fish_todo_using_subcommand commands" -s y -l yes -d 'Answer yes to confirmation prompts'
complete -c todo -n "__fish_todo_using_subcommand commands" -l read-only -d 'Enter the context read-only: commands that change state are refused'
complete -c todo -n "__fish_todo_using_subcommand commands" -l report -d 'Print the context cost of each strategy (tools and o200k tokens) and exit'
complete -c todo -n "__fish_todo_using_subcommand commands" -s h -l help -d 'Print help'
complete -c todo -n "__fish_todo_using_subcommand describe" -l context -d 'Run in this runtime context (see `contexts`)' -r
complete -c todo -n "__fish_todo_using_subcommand describe" -l db -d 'SQLite database file, or :memory: (the default)' -r
complete -c todo -n "__fish_todo_using_subcommand describe" -l json -d 'Print results as JSON: the CommandResult exactly as MCP clients get it'
complete -c todo -n "__fish_todo_using_subcommand describe" -s y -l yes -d 'Answer yes to confirmation prompts'
complete -c todo -n "__fish_todo_using_subcommand describe" -l read-only -d 'Enter the context read-only: commands that change state are refused'
complete -c todo -n "__fish_todo_using_subcommand describe" -l report -d 'Print the context cost of each strategy (tools and o200k tokens) and exit'
complete -c todo -n "__fish_todo_using_subcommand describe" -s h -l help -d 'Print help'
complete -c todo -n "__fish_todo_using_subcommand batch" -l context -d 'Run in this runtime context (see `contexts`)' -r
complete -c todo -n "__fish_todo_using_subcommand batch" -l db -d 'SQLite database file, or :memory: (the default)' -r
complete -c todo -n "__fish_todo_using_subcommand batch" -l json -d 'Print results as JSON: the CommandResult exactly as MCP clients get it'
complete -c todo -n "__fish_todo_using_subcommand batch" -s y -l yes -d 'Answer yes to confirmation prompts'
complete -c todo -n "__fish_todo_using_subcommand batch" -l read-only -d 'Enter the context read-only: commands that change state are refused'
complete -c todo -n "__fish_todo_using_subcommand batch" -l report -d 'Print the context cost of each strategy (tools and o200k tokens) and exit'
complete -c todo -n "__fish_todo_using_subcommand batch" -s h -l help -d 'Print help'
complete -c todo -n "__fish_todo_using_subcommand pipe" -l context -d 'Run in this runtime context (see `contexts`)' -r
complete -c todo -n "__fish_todo_using_subcommand pipe" -l db -d 'SQLite database file, or :memory: (the default)' -r
complete -c todo -n "__fish_todo_using_subcommand pipe" -l json -d 'Print results as JSON: the CommandResult exactly as MCP clients get it'
complete -c todo -n "__fish_todo_using_subcommand pipe" -s y -l yes -d 'Answer yes to confirmation prompts'
complete -c todo -n "__fish_todo_using_subcommand pipe" -l read-only -d 'Enter the context read-only: commands that change state are refused'
complete -c todo -n "__fish_todo_using_subcommand pipe" -l report -d 'Print the context cost of each strategy (tools and o200k tokens) and exit'
complete -c todo -n "__fish_todo_using_subcommand pipe" -s h -l help -d 'Print help'
complete -c todo -n "__fish_todo_using_subcommand contexts" -l context -d 'Run in this runtime context (see `contexts`)' -r
complete -c todo -n "__fish_todo_using_subcommand contexts" -l db -d 'SQLite database file, or :memory: (the default)' -r
complete -c todo -n "__fish_todo_using_subcommand contexts" -l json -d 'Print results as JSON: the CommandResult exactly as MCP clients get it'
complete -c todo -n "__fish_todo_using_subcommand contexts" -s y -l yes -d 'Answer yes to confirmation prompts'
complete -c todo -n "__fish_todo_using_subcommand contexts" -l read-only -d 'Enter the context read-only: commands that change state are refused'
complete -c todo -n "__fish_todo_using_subcommand contexts" -l report -d 'Print the context cost of each strategy (tools and o200k tokens) and exit'
complete -c todo -n "__fish_todo_using_subcommand contexts" -s h -l help -d 'Print help'
complete -c todo -n "__fish_todo_using_subcommand completions" -l context -d 'Run in this runtime context (see `contexts`)' -r
complete -c todo -n "__fish_todo_using_subcommand completions" -l db -d 'SQLite database file, or :memory: (the default)' -r
complete -c todo -n "__fish_todo_using_subcommand completions" -l json -d 'Print results as JSON: the CommandResult exactly as MCP clients get it'
complete -c todo -n "__fish_todo_using_subcommand completions" -s y -l yes -d 'Answer yes to confirmation prompts'
complete -c todo -n "__fish_todo_using_subcommand completions" -l read-only -d 'Enter the context read-only: commands that change state are refused'
complete -c todo -n "__fish_todo_using_subcommand completions" -l report -d 'Print the context cost of each strategy (tools and o200k tokens) and exit'
complete -c todo -n "__fish_todo_using_subcommand completions" -s h -l help -d 'Print help'
complete -c todo -n "__fish_todo_using_subcommand serve" -l strategy -d 'Tool strategy: individual, grouped, lazy or hybrid (AFD_TOOL_STRATEGY overrides it)' -r
complete -c todo -n "__fish_todo_using_subcommand serve" -l http -d 'Serve streamable HTTP on this address (e.g. 127.0.0.1:8787) instead of stdio' -r
complete -c todo -n "__fish_todo_using_subcommand serve" -l token -d 'Require this bearer token on HTTP requests' -r
complete -c todo -n "__fish_todo_using_subcommand serve" -l auth-issuer -d 'Accept OAuth access tokens from this authorization server (its issuer URL) on HTTP, and show each caller only the commands its scopes cover (default: AFD_AUTH_ISSUER)' -r
complete -c todo -n "__fish_todo_using_subcommand serve" -l auth-audience -d 'This server/'s canonical URL as clients reach it (https://mcp.example.com/mcp): tokens must be issued for it (default: AFD_AUTH_AUDIENCE)' -r
complete -c todo -n "__fish_todo_using_subcommand serve" -l auth-jwks -d 'Fetch the issuer/'s signing keys here rather than where its metadata says' -r
complete -c todo -n "__fish_todo_using_subcommand serve" -l auth-introspect -d 'Also accept opaque tokens, checked by the issuer/'s introspection endpoint as this client (its secret from AFD_AUTH_CLIENT_SECRET)' -r
complete -c todo -n "__fish_todo_using_subcommand serve" -l allowed-host -d 'Accept requests for this Host name (repeat for several; default: loopback names only)' -r
complete -c todo -n "__fish_todo_using_subcommand serve" -l audit-log -d 'Append the audit trail (one JSON line per decision) to FILE (default: AFD_AUDIT_LOG; always to tracing, target afd::audit)' -r -F
complete -c todo -n "__fish_todo_using_subcommand serve" -l audit-store -d 'Also write the audit trail to the table afd_audit of postgres://user:password@host/db (TLS by libpq/'s sslmode and sslrootcert)' -r
complete -c todo -n "__fish_todo_using_subcommand serve" -l audit-redact -d 'Argument fields whose values the audit trail replaces with [redacted] (comma-separated)' -r
complete -c todo -n "__fish_todo_using_subcommand serve" -l usage-db -d 'Keep usage statistics in this SQLite file, so they survive restarts (default: in memory)' -r -F
complete -c todo -n "__fish_todo_using_subcommand serve" -l usage-store -d 'Keep usage statistics in postgres://user:password@host/db (shared by replicas; TLS by libpq/'s sslmode and sslrootcert), sqlite:PATH, memory or off (default: AFD_USAGE_STORE, else in memory)' -r
complete -c todo -n "__fish_todo_using_subcommand serve" -l sessions -d 'Keep sessions in redis://host:port[/db] or rediss:// for TLS (shared by replicas), or memory (default: AFD_SESSION_STORE, else in memory)' -r
complete -c todo -n "__fish_todo_using_subcommand serve" -l session-idle -d 'End sessions unused for this long, in memory or in Redis, e.g. 45m or 2h (default: AFD_SESSION_IDLE, else what the app sets, 30m by default)' -r
complete -c todo -n "__fish_todo_using_subcommand serve" -l drain -d 'On SIGTERM or SIGINT, refuse new calls and give those in flight this long to finish before cancelling them, e.g. 30s or 2m (default: AFD_DRAIN, else 30s)' -r
complete -c todo -n "__fish_todo_using_subcommand serve" -l log-format -d 'Write log lines on stderr as text or json, one object a line (default: AFD_LOG_FORMAT, else text; RUST_LOG filters, default info, rmcp and the audit trail at warn)' -r
complete -c todo -n "__fish_todo_using_subcommand serve" -l metrics -d 'Serve Prometheus metrics at http://ADDR/metrics, with /healthz and /readyz, e.g. 127.0.0.1:9464 (default: AFD_METRICS_ADDR; needs the `metrics` feature)' -r
complete -c todo -n "__fish_todo_using_subcommand serve" -l export -d 'Write the catalog as a folder tree (<category>/<command>.json, index.json, README.md) into DIR and exit' -r -F
complete -c todo -n "__fish_todo_using_subcommand serve" -l context -d 'Run in this runtime context (see `contexts`)' -r
complete -c todo -n "__fish_todo_using_subcommand serve" -l db -d 'SQLite database file, or :memory: (the default)' -r
complete -c todo -n "__fish_todo_using_subcommand serve" -l audit-arguments -d 'Record calls/' arguments in the audit trail (off by default)'
complete -c todo -n "__fish_todo_using_subcommand serve" -l no-usage -d 'Record no usage statistics'
complete -c todo -n "__fish_todo_using_subcommand serve" -l json -d 'Print results as JSON: the CommandResult exactly as MCP clients get it'
complete -c todo -n "__fish_todo_using_subcommand serve" -s y -l yes -d 'Answer yes to confirmation prompts'
complete -c todo -n "__fish_todo_using_subcommand serve" -l read-only -d 'Enter the context read-only: commands that change state are refused'
complete -c todo -n "__fish_todo_using_subcommand serve" -l report -d 'Print the context cost of each strategy (tools and o200k tokens) and exit'
complete -c todo -n "__fish_todo_using_subcommand serve" -s h -l help -d 'Print help'
complete -c todo -n "__fish_todo_using_subcommand todo-clear" -l input-json -d 'The whole input as a JSON object (flags given too override its fields)' -r
complete -c todo -n "__fish_todo_using_subcommand todo-clear" -l input-file -d 'The whole input from a JSON file (/'-/': standard input)' -r -F
complete -c todo -n "__fish_todo_using_subcommand todo-clear" -l context -d 'Run in this runtime context (see `contexts`)' -r
complete -c todo -n "__fish_todo_using_subcommand todo-clear" -l db -d 'SQLite database file, or :memory: (the default)' -r
complete -c todo -n "__fish_todo_using_subcommand todo-clear" -l json -d 'Print results as JSON: the CommandResult exactly as MCP clients get it'
complete -c todo -n "__fish_todo_using_subcommand todo-clear" -s y -l yes -d 'Answer yes to confirmation prompts'
complete -c todo -n "__fish_todo_using_subcommand todo-clear" -l read-only -d 'Enter the context read-only: commands that change state are refused'
complete -c todo -n "__fish_todo_using_subcommand todo-clear" -l report -d 'Print the context cost of each strategy (tools and o200k tokens) and exit'
complete -c todo -n "__fish_todo_using_subcommand todo-clear" -s h -l help -d 'Print help (see more with /'--help/')'
complete -c todo -n "__fish_todo_using_subcommand todo-create" -l title -d 'What to do.' -r
complete -c todo -n "__fish_todo_using_subcommand todo-create" -l description -d 'More detail.' -r
complete -c todo -n "__fish_todo_using_subcommand todo-create" -l priority -d 'How urgent (default: medium). [default: medium]' -r -f -a "low/t''
medium/t''
high/t''"
complete -c todo -n "__fish_todo_using_subcommand todo-create" -l input-json -d 'The whole input as a JSON object (flags given too override its fields)' -r
complete -c todo -n "__fish_todo_using_subcommand todo-create" -l input-file -d 'The whole input from a JSON file (/'-/': standard input)' -r -F
complete -c todo -n "__fish_todo_using_subcommand todo-create" -l context -d 'Run in this runtime context (see `contexts`)' -r
complete -c todo -n "__fish_todo_using_subcommand todo-create" -l db -d 'SQLite database file, or :memory: (the default)' -r
complete -c todo -n "__fish_todo_using_subcommand todo-create" -l json -d 'Print results as JSON: the CommandResult exactly as MCP clients get it'
complete -c todo -n "__fish_todo_using_subcommand todo-create" -s y -l yes -d 'Answer yes to confirmation prompts'
complete -c todo -n "__fish_todo_using_subcommand todo-create" -l read-only -d 'Enter the context read-only: commands that change state are refused'
complete -c todo -n "__fish_todo_using_subcommand todo-create" -l report -d 'Print the context cost of each strategy (tools and o200k tokens) and exit'
complete -c todo -n "__fish_todo_using_subcommand todo-create" -s h -l help -d 'Print help (see more with /'--help/')'
complete -c todo -n "__fish_todo_using_subcommand todo-create-batch" -l todos -d 'The todos to create.' -r
complete -c todo -n "__fish_todo_using_subcommand todo-create-batch" -l input-json -d 'The whole input as a JSON object (flags given too override its fields)' -r
complete -c todo -n "__fish_todo_using_subcommand todo-create-batch" -l input-file -d 'The whole input from a JSON file (/'-/': standard input)' -r -F
complete -c todo -n "__fish_todo_using_subcommand todo-create-batch" -l context -d 'Run in this runtime context (see `contexts`)' -r
complete -c todo -n "__fish_todo_using_subcommand todo-create-batch" -l db -d 'SQLite database file, or :memory: (the default)' -r
complete -c todo -n "__fish_todo_using_subcommand todo-create-batch" -l json -d 'Print results as JSON: the CommandResult exactly as MCP clients get it'
complete -c todo -n "__fish_todo_using_subcommand todo-create-batch" -s y -l yes -d 'Answer yes to confirmation prompts'
complete -c todo -n "__fish_todo_using_subcommand todo-create-batch" -l read-only -d 'Enter the context read-only: commands that change state are refused'
complete -c todo -n "__fish_todo_using_subcommand todo-create-batch" -l report -d 'Print the context cost of each strategy (tools and o200k tokens) and exit'
complete -c todo -n "__fish_todo_using_subcommand todo-create-batch" -s h -l help -d 'Print help (see more with /'--help/')'
complete -c todo -n "__fish_todo_using_subcommand todo-delete" -l id -d 'The todo/'s id.' -r
complete -c todo -n "__fish_todo_using_subcommand todo-delete" -l input-json -d 'The whole input as a JSON object (flags given too override its fields)' -r
complete -c todo -n "__fish_todo_using_subcommand todo-delete" -l input-file -d 'The whole input from a JSON file (/'-/': standard input)' -r -F
complete -c todo -n "__fish_todo_using_subcommand todo-delete" -l context -d 'Run in this runtime context (see `contexts`)' -r
complete -c todo -n "__fish_todo_using_subcommand todo-delete" -l db -d 'SQLite database file, or :memory: (the default)' -r
complete -c todo -n "__fish_todo_using_subcommand todo-delete" -l json -d 'Print results as JSON: the CommandResult exactly as MCP clients get it'
complete -c todo -n "__fish_todo_using_subcommand todo-delete" -s y -l yes -d 'Answer yes to confirmation prompts'
complete -c todo -n "__fish_todo_using_subcommand todo-delete" -l read-only -d 'Enter the context read-only: commands that change state are refused'
complete -c todo -n "__fish_todo_using_subcommand todo-delete" -l report -d 'Print the context cost of each strategy (tools and o200k tokens) and exit'
complete -c todo -n "__fish_todo_using_subcommand todo-delete" -s h -l help -d 'Print help (see more with /'--help/')'
complete -c todo -n "__fish_todo_using_subcommand todo-delete-batch" -l ids -d 'The todos/' ids.' -r
complete -c todo -n "__fish_todo_using_subcommand todo-delete-batch" -l input-json -d 'The whole input as a JSON object (flags given too override its fields)' -r
complete -c todo -n "__fish_todo_using_subcommand todo-delete-batch" -l input-file -d 'The whole input from a JSON file (/'-/': standard input)' -r -F
complete -c todo -n "__fish_todo_using_subcommand todo-delete-batch" -l context -d 'Run in this runtime context (see `contexts`)' -r
complete -c todo -n "__fish_todo_using_subcommand todo-delete-batch" -l db -d 'SQLite database file, or :memory: (the default)' -r
complete -c todo -n "__fish_todo_using_subcommand todo-delete-batch" -l json -d 'Print results as JSON: the CommandResult exactly as MCP clients get it'
complete -c todo -n "__fish_todo_using_subcommand todo-delete-batch" -s y -l yes -d 'Answer yes to confirmation prompts'
complete -c todo -n "__fish_todo_using_subcommand todo-delete-batch" -l read-only -d 'Enter the context read-only: commands that change state are refused'
complete -c todo -n "__fish_todo_using_subcommand todo-delete-batch" -l report -d 'Print the context cost of each strategy (tools and o200k tokens) and exit'
complete -c todo -n "__fish_todo_using_subcommand todo-delete-batch" -s h -l help -d 'Print help (see more with /'--help/')'
complete -c todo -n "__fish_todo_using_subcommand todo-get" -l id -d 'The todo/'s id.' -r
complete -c todo -n "__fish_todo_using_subcommand todo-get" -l input-json -d 'The whole input as a JSON object (flags given too override its fields)' -r
complete -c todo -n "__fish_todo_using_subcommand todo-get" -l input-file -d 'The whole input from a JSON file (/'-/': standard input)' -r -F
complete -c todo -n "__fish_todo_using_subcommand todo-get" -l context -d 'Run in this runtime context (see `contexts`)' -r
complete -c todo -n "__fish_todo_using_subcommand todo-get" -l db -d 'SQLite database file, or :memory: (the default)' -r
complete -c todo -n "__fish_todo_using_subcommand todo-get" -l json -d 'Print results as JSON: the CommandResult exactly as MCP clients get it'
complete -c todo -n "__fish_todo_using_subcommand todo-get" -s y -l yes -d 'Answer yes to confirmation prompts'
complete -c todo -n "__fish_todo_using_subcommand todo-get" -l read-only -d 'Enter the context read-only: commands that change state are refused'
complete -c todo -n "__fish_todo_using_subcommand todo-get" -l report -d 'Print the context cost of each strategy (tools and o200k tokens) and exit'
complete -c todo -n "__fish_todo_using_subcommand todo-get" -s h -l help -d 'Print help (see more with /'--help/')'
complete -c todo -n "__fish_todo_using_subcommand todo-list" -l completed -d 'Only completed (true) or pending (false) todos.' -r
complete -c todo -n "__fish_todo_using_subcommand todo-list" -l priority -d 'Only this priority.' -r -f -a "low/t''
medium/t''
high/t''"
complete -c todo -n "__fish_todo_using_subcommand todo-list" -l search -d 'Text to find in the title or description.' -r
complete -c todo -n "__fish_todo_using_subcommand todo-list" -l sort-by -d 'Sort field (default: createdAt).' -r -f -a "createdAt/t''
updatedAt/t''
priority/t''
title/t''"
complete -c todo -n "__fish_todo_using_subcommand todo-list" -l sort-order -d 'Sort direction (default: desc).' -r -f -a "asc/t''
desc/t''"
complete -c todo -n "__fish_todo_using_subcommand todo-list" -l limit -d 'Page size, 1 to 100 (default 20). [default: 20]' -r
complete -c todo -n "__fish_todo_using_subcommand todo-list" -l offset -d 'Todos to skip (default 0). [default: 0]' -r
complete -c todo -n "__fish_todo_using_subcommand todo-list" -l input-json -d 'The whole input as a JSON object (flags given too override its fields)' -r
complete -c todo -n "__fish_todo_using_subcommand todo-list" -l input-file -d 'The whole input from a JSON file (/'-/': standard input)' -r -F
complete -c todo -n "__fish_todo_using_subcommand todo-list" -l context -d 'Run in this runtime context (see `contexts`)' -r
complete -c todo -n "__fish_todo_using_subcommand todo-list" -l db -d 'SQLite database file, or :memory: (the default)' -r
complete -c todo -n "__fish_todo_using_subcommand todo-list" -l json -d 'Print results as JSON: the CommandResult exactly as MCP clients get it'
complete -c todo -n "__fish_todo_using_subcommand todo-list" -s y -l yes -d 'Answer yes to confirmation prompts'
complete -c todo -n "__fish_todo_using_subcommand todo-list" -l read-only -d 'Enter the context read-only: commands that change state are refused'
complete -c todo -n "__fish_todo_using_subcommand todo-list" -l report -d 'Print the context cost of each strategy (tools and o200k tokens) and exit'
complete -c todo -n "__fish_todo_using_subcommand todo-list" -s h -l help -d 'Print help (see more with /'--help/')'
complete -c todo -n "__fish_todo_using_subcommand todo-stats" -l input-json -d 'The whole input as a JSON object (flags given too override its fields)' -r
complete -c todo -n "__fish_todo_using_subcommand todo-stats" -l input-file -d 'The whole input from a JSON file (/'-/': standard input)' -r -F
complete -c todo -n "__fish_todo_using_subcommand todo-stats" -l context -d 'Run in this runtime context (see `contexts`)' -r
complete -c todo -n "__fish_todo_using_subcommand todo-stats" -l db -d 'SQLite database file, or :memory: (the default)' -r
complete -c todo -n "__fish_todo_using_subcommand todo-stats" -l json -d 'Print results as JSON: the CommandResult exactly as MCP clients get it'
complete -c todo -n "__fish_todo_using_subcommand todo-stats" -s y -l yes -d 'Answer yes to confirmation prompts'
complete -c todo -n "__fish_todo_using_subcommand todo-stats" -l read-only -d 'Enter the context read-only: commands that change state are refused'
complete -c todo -n "__fish_todo_using_subcommand todo-stats" -l report -d 'Print the context cost of each strategy (tools and o200k tokens) and exit'
complete -c todo -n "__fish_todo_using_subcommand todo-stats" -s h -l help -d 'Print help (see more with /'--help/')'
complete -c todo -n "__fish_todo_using_subcommand todo-toggle" -l id -d 'The todo/'s id.' -r
complete -c todo -n "__fish_todo_using_subcommand todo-toggle" -l input-json -d 'The whole input as a JSON object (flags given too override its fields)' -r
complete -c todo -n "__fish_todo_using_subcommand todo-toggle" -l input-file -d 'The whole input from a JSON file (/'-/': standard input)' -r -F
complete -c todo -n "__fish_todo_using_subcommand todo-toggle" -l context -d 'Run in this runtime context (see `contexts`)' -r
complete -c todo -n "__fish_todo_using_subcommand todo-toggle" -l db -d 'SQLite database file, or :memory: (the default)' -r
complete -c todo -n "__fish_todo_using_subcommand todo-toggle" -l json -d 'Print results as JSON: the CommandResult exactly as MCP clients get it'
complete -c todo -n "__fish_todo_using_subcommand todo-toggle" -s y -l yes -d 'Answer yes to confirmation prompts'
complete -c todo -n "__fish_todo_using_subcommand todo-toggle" -l read-only -d 'Enter the context read-only: commands that change state are refused'
complete -c todo -n "__fish_todo_using_subcommand todo-toggle" -l report -d 'Print the context cost of each strategy (tools and o200k tokens) and exit'
complete -c todo -n "__fish_todo_using_subcommand todo-toggle" -s h -l help -d 'Print help (see more with /'--help/')'
complete -c todo -n "__fish_todo_using_subcommand todo-toggle-batch" -l ids -d 'The todos/' ids.' -r
complete -c todo -n "__fish_todo_using_subcommand todo-toggle-batch" -l completed -d 'Set every todo to this state instead of flipping each.' -r
complete -c todo -n "__fish_todo_using_subcommand todo-toggle-batch" -l input-json -d 'The whole input as a JSON object (flags given too override its fields)' -r
complete -c todo -n "__fish_todo_using_subcommand todo-toggle-batch" -l input-file -d 'The whole input from a JSON file (/'-/': standard input)' -r -F
complete -c todo -n "__fish_todo_using_subcommand todo-toggle-batch" -l context -d 'Run in this runtime context (see `contexts`)' -r
complete -c todo -n "__fish_todo_using_subcommand todo-toggle-batch" -l db -d 'SQLite database file, or :memory: (the default)' -r
complete -c todo -n "__fish_todo_using_subcommand todo-toggle-batch" -l json -d 'Print results as JSON: the CommandResult exactly as MCP clients get it'
complete -c todo -n "__fish_todo_using_subcommand todo-toggle-batch" -s y -l yes -d 'Answer yes to confirmation prompts'
complete -c todo -n "__fish_todo_using_subcommand todo-toggle-batch" -l read-only -d 'Enter the context read-only: commands that change state are refused'
complete -c todo -n "__fish_todo_using_subcommand todo-toggle-batch" -l report -d 'Print the context cost of each strategy (tools and o200k tokens) and exit'
complete -c todo -n "__fish_todo_using_subcommand todo-toggle-batch" -s h -l help -d 'Print help (see more with /'--help/')'
complete -c todo -n "__fish_todo_using_subcommand todo-update" -l id -d 'The todo/'s id.' -r
complete -c todo -n "__fish_todo_using_subcommand todo-update" -l title -d 'New title.' -r
complete -c todo -n "__fish_todo_using_subcommand todo-update" -l description -d 'New description.' -r
complete -c todo -n "__fish_todo_using_subcommand todo-update" -l priority -d 'New priority.' -r -f -a "low/t''
medium/t''
high/t''"
complete -c todo -n "__fish_todo_using_subcommand todo-update" -l completed -d 'New completion state.' -r
complete -c todo -n "__fish_todo_using_subcommand todo-update" -l input-json -d 'The whole input as a JSON object (flags given too override its fields)' -r
complete -c todo -n "__fish_todo_using_subcommand todo-update" -l input-file -d 'The whole input from a JSON file (/'-/': standard input)' -r -F
complete -c todo -n "__fish_todo_using_subcommand todo-update" -l context -d 'Run in this runtime context (see `contexts`)' -r
complete -c todo -n "__fish_todo_using_subcommand todo-update" -l db -d 'SQLite database file, or :memory: (the default)' -r
complete -c todo -n "__fish_todo_using_subcommand todo-update" -l json -d 'Print results as JSON: the CommandResult exactly as MCP clients get it'
complete -c todo -n "__fish_todo_using_subcommand todo-update" -s y -l yes -d 'Answer yes to confirmation prompts'
complete -c todo -n "__fish_todo_using_subcommand todo-update" -l read-only -d 'Enter the context read-only: commands that change state are refused'
complete -c todo -n "__fish_todo_using_subcommand todo-update" -l report -d 'Print the context cost of each strategy (tools and o200k tokens) and exit'
complete -c todo -n "__fish_todo_using_subcommand todo-update" -s h -l help -d 'Print help (see more with /'--help/')'
complete -c todo -n "__fish_todo_using_subcommand help; and not __fish_seen_subcommand_from call commands describe batch pipe contexts completions serve todo-clear todo-create todo-create-batch todo-delete todo-delete-batch todo-get todo-list todo-stats todo-toggle todo-toggle-batch todo-update help" -f -a "call" -d 'Call a command: `call <command> --field value ...`'
complete -c todo -n "__fish_todo_using_subcommand help; and not __fish_seen_subcommand_from call commands describe batch pipe contexts completions serve todo-clear todo-create todo-create-batch todo-delete todo-delete-batch todo-get todo-list todo-stats todo-toggle todo-toggle-batch todo-update help" -f -a "commands" -d 'List the commands, or search them (ranked as afd-discover)'
complete -c todo -n "__fish_todo_using_subcommand help; and not __fish_seen_subcommand_from call commands describe batch pipe contexts completions serve todo-clear todo-create todo-create-batch todo-delete todo-delete-batch todo-get todo-list todo-stats todo-toggle todo-toggle-batch todo-update help" -f -a "describe" -d 'Show a command/'s full definition and its flags'
complete -c todo -n "__fish_todo_using_subcommand help; and not __fish_seen_subcommand_from call commands describe batch pipe contexts completions serve todo-clear todo-create todo-create-batch todo-delete todo-delete-batch todo-get todo-list todo-stats todo-toggle todo-toggle-batch todo-update help" -f -a "batch" -d 'Run several commands from a JSON file (afd-batch/'s input; /'-/': stdin)'
complete -c todo -n "__fish_todo_using_subcommand help; and not __fish_seen_subcommand_from call commands describe batch pipe contexts completions serve todo-clear todo-create todo-create-batch todo-delete todo-delete-batch todo-get todo-list todo-stats todo-toggle todo-toggle-batch todo-update help" -f -a "pipe" -d 'Run a pipeline from a JSON file (afd-pipe/'s input; /'-/': stdin)'
complete -c todo -n "__fish_todo_using_subcommand help; and not __fish_seen_subcommand_from call commands describe batch pipe contexts completions serve todo-clear todo-create todo-create-batch todo-delete todo-delete-batch todo-get todo-list todo-stats todo-toggle todo-toggle-batch todo-update help" -f -a "contexts" -d 'List the runtime contexts'
complete -c todo -n "__fish_todo_using_subcommand help; and not __fish_seen_subcommand_from call commands describe batch pipe contexts completions serve todo-clear todo-create todo-create-batch todo-delete todo-delete-batch todo-get todo-list todo-stats todo-toggle todo-toggle-batch todo-update help" -f -a "completions" -d 'Print a shell completion script'
complete -c todo -n "__fish_todo_using_subcommand help; and not __fish_seen_subcommand_from call commands describe batch pipe contexts completions serve todo-clear todo-create todo-create-batch todo-delete todo-delete-batch todo-get todo-list todo-stats todo-toggle todo-toggle-batch todo-update help" -f -a "serve" -d 'Serve the commands to MCP clients (stdio unless --http is given)'
complete -c todo -n "__fish_todo_using_subcommand help; and not __fish_seen_subcommand_from call commands describe batch pipe contexts completions serve todo-clear todo-create todo-create-batch todo-delete todo-delete-batch todo-get todo-list todo-stats todo-toggle todo-toggle-batch todo-update help" -f -a "todo-clear" -d 'Clear all completed todos (asks for confirmation)'
complete -c todo -n "__fish_todo_using_subcommand help; and not __fish_seen_subcommand_from call commands describe batch pipe contexts completions serve todo-clear todo-create todo-create-batch todo-delete todo-delete-batch todo-get todo-list todo-stats todo-toggle todo-toggle-batch todo-update help" -f -a "todo-create" -d 'Create a new todo item'
complete -c todo -n "__fish_todo_using_subcommand help; and not __fish_seen_subcommand_from call commands describe batch pipe contexts completions serve todo-clear todo-create todo-create-batch todo-delete todo-delete-batch todo-get todo-list todo-stats todo-toggle todo-toggle-batch todo-update help" -f -a "todo-create-batch" -d 'Create several todos at once; each succeeds or fails on its own'
complete -c todo -n "__fish_todo_using_subcommand help; and not __fish_seen_subcommand_from call commands describe batch pipe contexts completions serve todo-clear todo-create todo-create-batch todo-delete todo-delete-batch todo-get todo-list todo-stats todo-toggle todo-toggle-batch todo-update help" -f -a "todo-delete" -d 'Delete a todo permanently (asks for confirmation)'
complete -c todo -n "__fish_todo_using_subcommand help; and not __fish_seen_subcommand_from call commands describe batch pipe contexts completions serve todo-clear todo-create todo-create-batch todo-delete todo-delete-batch todo-get todo-list todo-stats todo-toggle todo-toggle-batch todo-update help" -f -a "todo-delete-batch" -d 'Delete several todos at once; unknown ids are reported, the rest deleted (asks for confirmation)'
complete -c todo -n "__fish_todo_using_subcommand help; and not __fish_seen_subcommand_from call commands describe batch pipe contexts completions serve todo-clear todo-create todo-create-batch todo-delete todo-delete-batch todo-get todo-list todo-stats todo-toggle todo-toggle-batch todo-update help" -f -a "todo-get" -d 'Get a single todo by id'
complete -c todo -n "__fish_todo_using_subcommand help; and not __fish_seen_subcommand_from call commands describe batch pipe contexts completions serve todo-clear todo-create todo-create-batch todo-delete todo-delete-batch todo-get todo-list todo-stats todo-toggle todo-toggle-batch todo-update help" -f -a "todo-list" -d 'List todos with filtering, sorting and pagination'
complete -c todo -n "__fish_todo_using_subcommand help; and not __fish_seen_subcommand_from call commands describe batch pipe contexts completions serve todo-clear todo-create todo-create-batch todo-delete todo-delete-batch todo-get todo-list todo-stats todo-toggle todo-toggle-batch todo-update help" -f -a "todo-stats" -d 'Get todo statistics: totals, completion and counts by priority'
complete -c todo -n "__fish_todo_using_subcommand help; and not __fish_seen_subcommand_from call commands describe batch pipe contexts completions serve todo-clear todo-create todo-create-batch todo-delete todo-delete-batch todo-get todo-list todo-stats todo-toggle todo-toggle-batch todo-update help" -f -a "todo-toggle" -d 'Toggle a todo between completed and pending'
complete -c todo -n "__fish_todo_using_subcommand help; and not __fish_seen_subcommand_from call commands describe batch pipe contexts completions serve todo-clear todo-create todo-create-batch todo-delete todo-delete-batch todo-get todo-list todo-stats todo-toggle todo-toggle-batch todo-update help" -f -a "todo-toggle-batch" -d 'Toggle several todos at once, or set them all to one state'
complete -c todo -n "__fish_todo_using_subcommand help; and not __fish_seen_subcommand_from call commands describe batch pipe contexts completions serve todo-clear todo-create todo-create-batch todo-delete todo-delete-batch todo-get todo-list todo-stats todo-toggle todo-toggle-batch todo-update help" -f -a "todo-update" -d 'Update a todo/'s fields'
complete -c todo -n "__fish_todo_using_subcommand help; and not __fish_seen_subcommand_from call commands describe batch pipe contexts completions serve todo-clear todo-create todo-create-batch todo-delete todo-delete-batch todo-get todo-list todo-stats todo-toggle todo-toggle-batch todo-update help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c todo -n "__fish_todo_using_subcommand help; and __fish_seen_subcommand_from call" -f -a "todo-clear" -d 'Clear all completed todos (asks for confirmation)'
complete -c todo -n "__fish_todo_using_subcommand help; and __fish_seen_subcommand_from call" -f -a "todo-create" -d 'Create a new todo item'
complete -c todo -n "__fish_todo_using_subcommand help; and __fish_seen_subcommand_from call" -f -a "todo-create-batch" -d 'Create several todos at once; each succeeds or fails on its own'
complete -c todo -n "__fish_todo_using_subcommand help; and __fish_seen_subcommand_from call" -f -a "todo-delete" -d 'Delete a todo permanently (asks for confirmation)'
complete -c todo -n "__fish_todo_using_subcommand help; and __fish_seen_subcommand_from call" -f -a "todo-delete-batch" -d 'Delete several todos at once; unknown ids are reported, the rest deleted (asks for confirmation)'
complete -c todo -n "__fish_todo_using_subcommand help; and __fish_seen_subcommand_from call" -f -a "todo-get" -d 'Get a single todo by id'
complete -c todo -n "__fish_todo_using_subcommand help; and __fish_seen_subcommand_from call" -f -a "todo-list" -d 'List todos with filtering, sorting and pagination'
complete -c todo -n "__fish_todo_using_subcommand help; and __fish_seen_subcommand_from call" -f -a "todo-stats" -d 'Get todo statistics: totals, completion and counts by priority'
complete -c todo -n "__fish_todo_using_subcommand help; and __fish_seen_subcommand_from call" -f -a "todo-toggle" -d 'Toggle a todo between completed and pending'
complete -c todo -n "__fish_todo_using_subcommand help; and __fish_seen_subcommand_from call" -f -a "todo-toggle-batch" -d 'Toggle several todos at once, or set them all to one state'
complete -c todo -n "__fish_todo_using_subcommand help; and __fish_seen_subcommand_from call" -f -a "todo-update" -d 'Update a todo/'s fields'
