project = "edge"

service "api" { # ERROR: Missing required argument
  address = "127.0.0.1"
}
