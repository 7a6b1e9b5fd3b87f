project = "edge"

service "web" {
  port    = 8080
  weights = { passing = 10, critical = 1 } # ERROR: Unsupported argument
}
