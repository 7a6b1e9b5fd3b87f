project = "edge"

variable "port" {
  type    = number
  default = "eighty" # ERROR: Invalid default value for variable
}
