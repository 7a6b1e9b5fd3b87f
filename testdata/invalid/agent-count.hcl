project = "edge"

agent "pool" {
  count    = 2 # ERROR: Invalid combination of count and for_each
  for_each = { a = "10.0.0.5:8500" }
  address  = "10.0.0.5:8500"
}

agent "half" {
  count   = 1.5 # ERROR: Invalid count
  address = "10.0.0.6:8500"
}
