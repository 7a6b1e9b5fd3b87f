project = "edge"

agent "node-a" {
  address = "10.0.0.5:8500"
}

agent "node-b" {
  address = "10.0.0.6:8500"
}

service "api" { # ERROR: Service without an agent
  port = 8080
}

variable "where" {
  default = ""
}

service "jobs" { # ERROR: Service without an agent
  agent = var.where
  port  = 8081
}
