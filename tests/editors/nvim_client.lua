-- Drives Neovim 0.7.2 (headless) as a user would: open a Python file, attach `shardls serve`,
-- wait for its diagnostics, hover over a spec, edit a line, and write what the editor saw to a
-- JSON file that test_editor_neovim.py checks.
--
-- 0.7 has no vim.lsp.start and no `nvim -l`: the client is started with vim.lsp.start_client
-- and attached with vim.lsp.buf_attach_client. Run as
--   SHARDLS_EDITOR_JOB=job.json nvim --headless -u NONE -i NONE -n -c 'luafile nvim_client.lua'
-- where job.json holds {file, cmd, root, init_options or settings, hover = {line, character},
-- edit_line, result, timeout_ms} (0-based positions, as in LSP).

local job = vim.fn.json_decode(table.concat(vim.fn.readfile(os.getenv('SHARDLS_EDITOR_JOB')), '\n'))
local result = { steps = {}, publishes = {} }

local function now_ms()
  return vim.loop.hrtime() / 1e6
end

local started = now_ms()

local function step(name)
  table.insert(result.steps, { name = name, ms = math.floor(now_ms() - started) })
end

local function codes(bufnr)
  local found = {}
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    table.insert(found, { code = d.code, line = d.lnum, severity = d.severity, message = d.message })
  end
  return found
end

local function has_code(bufnr, code)
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    if d.code == code then
      return true
    end
  end
  return false
end

local function run()
  vim.cmd('edit ' .. vim.fn.fnameescape(job.file))
  local bufnr = vim.api.nvim_get_current_buf()
  vim.bo[bufnr].filetype = 'python' -- -u NONE: no filetype detection

  -- Record every publishDiagnostics as it arrives, then let Neovim's own handler show it.
  local default_publish = vim.lsp.handlers['textDocument/publishDiagnostics']
  local handlers = {
    ['textDocument/publishDiagnostics'] = function(err, params, ctx, config)
      local seen = {}
      for _, d in ipairs(params.diagnostics) do
        table.insert(seen, d.code)
      end
      table.insert(result.publishes, { ms = math.floor(now_ms() - started), codes = seen })
      return default_publish(err, params, ctx, config)
    end,
  }

  local config = {
    name = 'shardls',
    cmd = job.cmd,
    root_dir = job.root,
    handlers = handlers,
    flags = { debounce_text_changes = 50 },
  }
  if job.init_options then
    config.init_options = job.init_options
  end
  if job.settings then
    -- Neovim 0.7's core neither declares workspace/configuration nor sends `settings`; like
    -- nvim-lspconfig, declare the capability (the server then asks, and Neovim's default
    -- handler answers from `settings`) and push them in on_init.
    config.capabilities = vim.lsp.protocol.make_client_capabilities()
    config.capabilities.workspace.configuration = true
    config.settings = job.settings
    config.on_init = function(client)
      client.notify('workspace/didChangeConfiguration', { settings = client.config.settings })
    end
  end
  local client_id = vim.lsp.start_client(config)
  assert(client_id, 'vim.lsp.start_client returned nil')
  assert(vim.lsp.buf_attach_client(bufnr, client_id), 'buf_attach_client failed')
  step('attached')

  -- Diagnostics: the indivisible line must be reported, the SH005 typo must be ignored (settings).
  result.diagnostics_arrived = vim.wait(job.timeout_ms, function()
    return has_code(bufnr, 'SH001') and not has_code(bufnr, 'SH005')
  end, 20)
  step('diagnostics')
  result.diagnostics = codes(bufnr)

  local client = vim.lsp.get_client_by_id(client_id)
  result.hover_provider = client ~= nil and client.server_capabilities.hoverProvider == true

  -- Hover, the way `K` (vim.lsp.buf.hover) builds its request: from the cursor.
  vim.api.nvim_win_set_cursor(0, { job.hover.line + 1, job.hover.character })
  local params = vim.lsp.util.make_position_params()
  local responses = vim.lsp.buf_request_sync(bufnr, 'textDocument/hover', params, job.timeout_ms)
  step('hover')
  local response = responses and responses[client_id]
  if response and response.result and response.result.contents then
    local contents = response.result.contents
    result.hover_kind = contents.kind
    result.hover = contents.value or contents
    -- What the floating window would show (Neovim's own markdown conversion).
    result.hover_lines = vim.lsp.util.convert_input_to_markdown_lines(contents)
  else
    result.hover_error = response and response.err and vim.inspect(response.err) or 'no response'
  end

  -- An edit: delete the indivisible line; its SH001 must go away (incremental didChange).
  vim.api.nvim_buf_set_lines(bufnr, job.edit_line, job.edit_line + 1, false, {})
  result.cleared_after_edit = vim.wait(job.timeout_ms, function()
    return not has_code(bufnr, 'SH001')
  end, 20)
  step('edit')
  result.diagnostics_after_edit = codes(bufnr)

  vim.lsp.stop_client(client_id)
  result.stopped = vim.wait(job.timeout_ms, function()
    return vim.lsp.get_client_by_id(client_id) == nil
  end, 20)
  step('stopped')
end

local ok, err = pcall(run)
result.ok = ok
result.error = ok and vim.NIL or tostring(err)
vim.fn.writefile({ vim.fn.json_encode(result) }, job.result)
if ok then
  vim.cmd('qall!')
else
  vim.cmd('cquit! 1')
end
