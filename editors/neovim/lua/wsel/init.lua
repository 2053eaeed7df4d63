-- wsel for Neovim's built-in LSP client: `.wse` filetype detection and `wsel lsp` started
-- for every `.wse` buffer (one server per project folder). Works with Neovim 0.7 and later.
--
--   require('wsel').setup()                                   -- `wsel` on $PATH
--   require('wsel').setup({ cmd = { '/path/to/wsel', 'lsp' } })
--   require('wsel').setup({ on_attach = function(client, bufnr) ... end })
local M = {}

M.clients = {}

local function root_of(bufnr)
  local name = vim.api.nvim_buf_get_name(bufnr)
  return vim.fn.fnamemodify(name, ':p:h')
end

--- Starts (or reuses) the server for `bufnr` and attaches it.
function M.attach(bufnr, opts)
  local root = root_of(bufnr)
  local config = {
    name = 'wsel',
    cmd = opts.cmd or { 'wsel', 'lsp' },
    root_dir = root,
    on_attach = opts.on_attach,
    capabilities = opts.capabilities,
  }
  if vim.lsp.start then
    -- Neovim 0.8+: reuses a running client with the same name and root.
    return vim.lsp.start(config, { bufnr = bufnr })
  end
  local id = M.clients[root]
  if not id or not vim.lsp.get_client_by_id(id) then
    id = vim.lsp.start_client(config)
    M.clients[root] = id
  end
  if id then
    vim.lsp.buf_attach_client(bufnr, id)
  end
  return id
end

function M.setup(opts)
  opts = opts or {}
  if vim.filetype and vim.filetype.add then
    vim.filetype.add({ extension = { wse = 'wse' } })
  end
  local group = vim.api.nvim_create_augroup('wsel_lsp', { clear = true })
  -- Neovim 0.7 only uses `vim.filetype.add` with `g:do_filetype_lua`; this covers it.
  vim.api.nvim_create_autocmd({ 'BufRead', 'BufNewFile' }, {
    group = group,
    pattern = '*.wse',
    command = 'setfiletype wse',
  })
  vim.api.nvim_create_autocmd('FileType', {
    group = group,
    pattern = 'wse',
    callback = function(args)
      vim.bo[args.buf].commentstring = '// %s'
      M.attach(args.buf, opts)
    end,
  })
end

return M
