// stf_set_options merges: a later value of an option replaces the earlier
// one, so calling it again and again keeps the process-wide options small,
// and SFs created afterwards still see the last value of every option.
#include <gtest/gtest.h>

#include <string>

#include "core/options.h"
#include "sf/sf.h"
#include "starforest.h"

namespace {

TEST(Options, RepeatedSetOptionsStayBounded) {
  ASSERT_EQ(stf_set_options("-stf_type basic -stf_pack_opt 0"), STF_SUCCESS);
  const std::size_t once = stf::global_options().size();
  for (int i = 0; i < 100000; i++) ASSERT_EQ(stf_set_options("-stf_type neighbor"), STF_SUCCESS);
  ASSERT_EQ(stf_set_options("-stf_type basic"), STF_SUCCESS);
  EXPECT_LE(stf::global_options().size(), once) << stf::global_options();

  // The effective values: the last -stf_type, and -stf_pack_opt 0 kept.
  stf::Options o;
  ASSERT_EQ(stf::default_options(stf::all_option_specs(), &o), STF_SUCCESS);
  EXPECT_EQ(o.type, "basic");
  EXPECT_FALSE(o.pack_opt);
  stf_sf sf = nullptr;
  ASSERT_EQ(stf_create(MPI_COMM_WORLD, &sf), STF_SUCCESS);
  const char *type = nullptr;
  ASSERT_EQ(stf_get_type(sf, &type), STF_SUCCESS);
  EXPECT_STREQ(type, "basic");
  ASSERT_EQ(stf_destroy(&sf), STF_SUCCESS);

  ASSERT_EQ(stf_set_options("-stf_type neighbor"), STF_SUCCESS);
  ASSERT_EQ(stf_create(MPI_COMM_WORLD, &sf), STF_SUCCESS);
  ASSERT_EQ(stf_get_type(sf, &type), STF_SUCCESS);
  EXPECT_STREQ(type, "neighbor");
  ASSERT_EQ(stf_destroy(&sf), STF_SUCCESS);

  // A bad string changes nothing.
  const std::string before = stf::global_options();
  EXPECT_EQ(stf_set_options("-stf_type basic -stf_pack_opt maybe"), STF_ERR_OPTION);
  EXPECT_EQ(stf::global_options(), before);
  ASSERT_EQ(stf_set_options("-stf_type basic -stf_pack_opt 1"), STF_SUCCESS);  // back to the defaults
}

}  // namespace
