# Golden plans of the shipped specs, made with no network from the live
# states in snapshots/ (TestShippedSnapshots in cmd/provision makes them on
# real servers): provision test specs, which make test runs.
# provision test -update specs rewrites golden/; read the diff first.

run "greenfield" {
  # No snapshot: nothing is live.

  # Rules over the plan (its JSON model), beside its golden files.
  assert {
    condition     = length([for c in plan.changes : c if c.action == "delete"]) == 0
    error_message = "A first apply deletes nothing."
  }
  assert {
    condition     = length([for c in plan.changes : c if c.action == "create" && length(regexall("[.]service[.]", c.address)) > 0]) == 2
    error_message = "Each team's gated API is registered."
  }
  assert {
    condition     = length(setsubtract([for d in declared : d.address], [for c in plan.changes : c.address])) == 0
    error_message = "Every declared object is planned."
  }
  assert {
    condition = length([
      for c in plan.changes : c.address
      if c.action != "delete" && length([for t in try(c.after.Tags, []) : t if length(regexall("[.]rule=", t)) > 0]) > 0 &&
      length([for t in try(c.after.Tags, []) : t if length(regexall("(forwardauth|auth[.]forward)[.]address=", t)) > 0]) == 0
    ]) == 0
    error_message = "Every service a proxy routes to is gated by a forward auth."
  }
}

run "hand-made, not imported" {
  # The seed's registration and .dashboard, made by hand: refused until
  # import blocks take them over (testdata/import).
  snapshot        = "snapshots/handmade.json"
  expect_failures = [service.gated-api]
}

run "converged" {
  snapshot          = "snapshots/converged.json"
  expect_no_changes = true
}

run "drifted" {
  # The port and a saved object's title edited by hand.
  snapshot = "snapshots/drifted.json"
}

run "other port" {
  snapshot  = "snapshots/converged.json"
  variables = { api_port = 8081 }
}

run "bad port" {
  variables       = { api_port = 0 }
  expect_failures = [var.api_port]
}
