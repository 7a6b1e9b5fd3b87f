project = "edge"

key "apps/edge/mode" {
  value = "on"
}

removed {
  from = key["apps/edge/mode"] # ERROR: Removed object still declared
  lifecycle {
    destroy = false
  }
}

removed {
  from = thing.x # ERROR: Invalid removed address
}
