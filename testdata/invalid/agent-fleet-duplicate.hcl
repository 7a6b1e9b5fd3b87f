project = "edge"

agent "fleet" {
  for_each = { n1 = "10.0.0.5:8500" }
  address  = each.value
}

agent "fleet" { # ERROR: Duplicate agent block
  address = "10.0.0.7:8500"
}

agent "pair" {
  for_each = { a = "10.0.0.8:8500", b = "10.0.0.8:8500" }
  address  = each.value # ERROR: Two agents at one address
}
