project = "edge"

# Each local is eight times the one before: the interpolation that crosses MaxStringBytes is refused.
locals {
  s0 = "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
  s1 = "${local.s0}${local.s0}${local.s0}${local.s0}${local.s0}${local.s0}${local.s0}${local.s0}"
  s2 = "${local.s1}${local.s1}${local.s1}${local.s1}${local.s1}${local.s1}${local.s1}${local.s1}"
  s3 = "${local.s2}${local.s2}${local.s2}${local.s2}${local.s2}${local.s2}${local.s2}${local.s2}"
  s4 = "${local.s3}${local.s3}${local.s3}${local.s3}${local.s3}${local.s3}${local.s3}${local.s3}"
  s5 = "${local.s4}${local.s4}${local.s4}${local.s4}${local.s4}${local.s4}${local.s4}${local.s4}"
  s6 = "${local.s5}${local.s5}${local.s5}${local.s5}${local.s5}${local.s5}${local.s5}${local.s5}"
  s7 = "${local.s6}${local.s6}${local.s6}${local.s6}${local.s6}${local.s6}${local.s6}${local.s6}" # ERROR: Spec asks for too much work
  s8 = "${local.s7}${local.s7}${local.s7}${local.s7}${local.s7}${local.s7}${local.s7}${local.s7}"
}
