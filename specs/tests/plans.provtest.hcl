# Golden plans of the shipped specs, made with no network: provision test specs
# (make test runs it). provision test -update rewrites tests/golden/; read the
# diff before committing it.

run "greenfield" {
  # No snapshot: nothing is live.
}

run "other port" {
  variables = { api_port = 8081 }
}

run "bad port" {
  variables       = { api_port = 0 }
  expect_failures = [var.api_port]
}
