project = "span"

consul "dc2" { # ERROR: Own datacenter not named
  address = "10.1.0.1:8500"
}

consul "dc3" { # ERROR: Missing datacenter address
  datacenter = "dc3"
}

consul "also-dc2" { # ERROR: Two consul blocks of one datacenter
  address    = "10.1.0.2:8500"
  datacenter = "dc2"
}

consul "b.c" { # ERROR: Invalid datacenter name
  address = "10.1.0.3:8500"
}

agent "west" {
  address = "10.1.0.9:8500"
  consul  = "dc9" # ERROR: Unknown datacenter
}

agent "east" {
  address = "10.0.0.9:8500"
  consul  = consul.dc4 # ERROR: Reference to undeclared consul
}

key "apps/span/mode" {
  consul = "dc9" # ERROR: Unknown datacenter
  value  = "on"
}

consul "dc5" "extra" { # ERROR: Extraneous label for consul
  address = "10.1.0.5:8500"
}
