# Vault for the secrets overlay (compose.vault.yaml): file storage on a named volume, no TLS inside the
# compose network. Initialise and unseal once (`vault operator init`), then write the token the
# secrets UI uses to the file named by VAULT_TOKEN_FILE (default ./.secrets/vault-token).
storage "file" {
  path = "/vault/file"
}
listener "tcp" {
  address     = "0.0.0.0:8200"
  tls_disable = 1
}
disable_mlock = true
ui            = false
