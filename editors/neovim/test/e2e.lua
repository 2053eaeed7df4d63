-- End-to-end test of `wsel lsp` in Neovim, run headless by
-- compiler/driver/tests/lsp_neovim.rs with WSEL_BIN, WSEL_FILE (a copy of
-- examples/digits/main.wse), WSEL_EDITORS (this repository's editors/) and WSEL_RESULT (a
-- file that receives one line per step and a final PASS or FAIL line).
local result = assert(io.open(os.getenv('WSEL_RESULT'), 'w'))
local function say(line)
  result:write(line .. '\n')
  result:flush()
end

local function run()
  vim.opt.runtimepath:append(os.getenv('WSEL_EDITORS') .. '/neovim')
  require('wsel').setup({ cmd = { os.getenv('WSEL_BIN'), 'lsp' } })
  vim.cmd('edit ' .. vim.fn.fnameescape(os.getenv('WSEL_FILE')))
  local buf = vim.api.nvim_get_current_buf()
  assert(vim.bo[buf].filetype == 'wse', 'filetype is ' .. vim.bo[buf].filetype)

  local started = vim.wait(30000, function()
    for _, client in pairs(vim.lsp.buf_get_clients(buf)) do
      if client.initialized then
        return true
      end
    end
    return false
  end, 20)
  assert(started, 'the language server did not start')
  say('step: server started')

  -- 1. Type an error: `relu(dense(x` becomes `relu(dnse(x`.
  local row, col
  for i, line in ipairs(vim.api.nvim_buf_get_lines(buf, 0, -1, false)) do
    local at = line:find('relu%(dense%(x')
    if at then
      row, col = i - 1, at + 4 -- 0-based column of `dense`
      break
    end
  end
  assert(row, 'no `relu(dense(x` in the example')
  vim.wait(500, function() return false end)
  vim.api.nvim_buf_set_text(buf, row, col, row, col + 5, { 'dnse' })
  local appeared = vim.wait(30000, function() return #vim.diagnostic.get(buf) > 0 end, 20)
  assert(appeared, 'no diagnostic appeared after typing an error')
  local d = vim.diagnostic.get(buf)[1]
  local code = d.code or (d.user_data and d.user_data.lsp and d.user_data.lsp.code)
  assert(code == 'E0105', 'diagnostic code ' .. tostring(code))
  assert(d.message:find('cannot find layer `dnse`', 1, true), 'message: ' .. d.message)
  assert(d.lnum == row and d.col == col, 'diagnostic at ' .. d.lnum .. ':' .. d.col)
  say('step: diagnostic ' .. code .. ' ' .. d.message:gsub('\n.*', ''))

  vim.api.nvim_buf_set_text(buf, row, col, row, col + 4, { 'dense' })
  local cleared = vim.wait(30000, function() return #vim.diagnostic.get(buf) == 0 end, 20)
  assert(cleared, 'the diagnostic did not go away after the fix')
  say('step: diagnostic cleared')

  -- 2. Hover on `dense`.
  local params = {
    textDocument = { uri = vim.uri_from_bufnr(buf) },
    position = { line = row, character = col + 1 },
  }
  local text
  for _, response in pairs(vim.lsp.buf_request_sync(buf, 'textDocument/hover', params, 20000) or {}) do
    if response.result then
      text = response.result.contents.value
    end
  end
  assert(text, 'no hover')
  assert(text:find('layer dense(', 1, true), 'hover: ' .. text)
  assert(text:find('`N = 64`', 1, true), 'hover: ' .. text)
  say('step: hover ' .. text:gsub('\n', ' '):sub(1, 120))

  -- 3. Go to the definition of `dense`, in the stdlib.
  local location
  for _, response in pairs(vim.lsp.buf_request_sync(buf, 'textDocument/definition', params, 20000) or {}) do
    if response.result then
      location = response.result
    end
  end
  assert(location, 'no definition')
  if location[1] then
    location = location[1]
  end
  assert(location.uri:match('/nn%.wse$'), 'definition in ' .. location.uri)
  vim.lsp.util.jump_to_location(location, 'utf-16')
  local name = vim.api.nvim_buf_get_name(0)
  assert(name:match('nn%.wse$'), 'jumped to ' .. name)
  local line = vim.api.nvim_get_current_line()
  assert(line:find('^layer dense%('), 'cursor line: ' .. line)
  say('step: definition ' .. name .. ': ' .. line)

  -- The stdlib buffer is a .wse buffer too: the server attaches and answers there.
  local std_buf = vim.api.nvim_get_current_buf()
  local attached = vim.wait(30000, function()
    return next(vim.lsp.buf_get_clients(std_buf)) ~= nil
  end, 20)
  assert(attached, 'the server did not attach to the stdlib file')
  say('step: attached to ' .. name)
end

local ok, err = pcall(run)
if ok then
  say('PASS')
  result:close()
  vim.cmd('qall!')
else
  say('FAIL ' .. tostring(err))
  result:close()
  vim.cmd('cquit! 1')
end
