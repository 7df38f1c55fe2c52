// stf_set_options merges: a later value of an option replaces the earlier
// one, so calling it again and again keeps the process-wide options small,
// and SFs created afterwards still see the last value of every option.
// Yes/no options without a value, the command line and STF_OPTIONS, and
// their precedence.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "core/options.h"
#include "device/registry.h"
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

stf::Options effective() {
  stf::Options o;
  EXPECT_EQ(stf::default_options(stf::all_option_specs(), &o), STF_SUCCESS) << stf_last_error_message();
  return o;
}

TEST(Options, BareFlagMeansYes) {
  ASSERT_EQ(stf_set_options("-stf_log_view -stf_view"), STF_SUCCESS) << stf_last_error_message();
  EXPECT_TRUE(effective().log_view);
  EXPECT_TRUE(effective().view);
  ASSERT_EQ(stf_set_options("-stf_view 0 -stf_pack_opt"), STF_SUCCESS);
  EXPECT_FALSE(effective().view);
  EXPECT_TRUE(effective().pack_opt);
  // Options that take a word or a number still need one; unknown ones are named.
  EXPECT_EQ(stf_set_options("-stf_view -stf_type"), STF_ERR_OPTION);
  EXPECT_NE(std::string(stf_last_error_message()).find("-stf_type needs a value"), std::string::npos);
  EXPECT_EQ(stf_set_options("-stf_veiw"), STF_ERR_OPTION);
  EXPECT_NE(std::string(stf_last_error_message()).find("unknown option -stf_veiw"), std::string::npos);
  EXPECT_EQ(stf_set_options("-stf_log_view maybe"), STF_ERR_OPTION);
  ASSERT_EQ(stf_set_options("-stf_log_view 0 -stf_view 0"), STF_SUCCESS);
  EXPECT_FALSE(effective().log_view);
}

TEST(Options, CommandLine) {
  char *argv[] = {(char *)"prog", (char *)"-n", (char *)"10", (char *)"-stf_type", (char *)"neighbor",
                  (char *)"--big", (char *)"3", (char *)"-stf_pack_opt", (char *)"-stf_view", (char *)"0",
                  (char *)"input.txt", (char *)"-stf_log_view", (char *)"--quiet"};
  const int argc = sizeof argv / sizeof *argv;
  ASSERT_EQ(stf_set_options("-stf_pack_opt 0 -stf_view 1"), STF_SUCCESS);
  ASSERT_EQ(stf_set_options_from_args(argc, argv), STF_SUCCESS) << stf_last_error_message();
  stf::Options o = effective();
  EXPECT_EQ(o.type, "neighbor");
  EXPECT_TRUE(o.pack_opt);  // bare, followed by another option
  EXPECT_FALSE(o.view);
  EXPECT_TRUE(o.log_view);  // bare, followed by the program's own option
  // An unknown -stf_ option or a bad value: named, nothing changed.
  const std::string before = stf::global_options();
  char *typo[] = {(char *)"prog", (char *)"-stf_type", (char *)"basic", (char *)"-stf_tpye", (char *)"window"};
  EXPECT_EQ(stf_set_options_from_args(5, typo), STF_ERR_OPTION);
  const std::string why = stf_last_error_message();
  EXPECT_NE(why.find("command line"), std::string::npos) << why;
  EXPECT_NE(why.find("-stf_tpye"), std::string::npos) << why;
  char *bad[] = {(char *)"prog", (char *)"-stf_view", (char *)"input.txt"};
  EXPECT_EQ(stf_set_options_from_args(3, bad), STF_ERR_OPTION);
  EXPECT_EQ(stf::global_options(), before);
  EXPECT_EQ(stf_set_options_from_args(1, argv), STF_SUCCESS);  // nothing to read
  ASSERT_EQ(stf_set_options("-stf_type basic -stf_log_view 0"), STF_SUCCESS);
}

// Precedence: STF_<NAME> < STF_OPTIONS < stf_set_options (so options
// another test here gave stf_set_options are not used).
TEST(Options, EnvironmentString) {
  ASSERT_EQ(setenv("STF_TWOSIDED", "nbx", 1), 0);
  ASSERT_EQ(setenv("STF_OPTIONS", "-stf_twosided allreduce -stf_debug -stf_device emu", 1), 0);
  stf::Options o = effective();
  EXPECT_EQ(o.twosided, stf::TwoSided::allreduce);
  EXPECT_TRUE(o.debug);
  EXPECT_EQ(stf::process_setting(stf::device_option()), "emu");
  ASSERT_EQ(stf_set_options("-stf_twosided nbx"), STF_SUCCESS);
  EXPECT_EQ(effective().twosided, stf::TwoSided::nbx);

  // An unknown option or a bad value there fails stf_create, naming the variable.
  stf_sf sf = nullptr;
  for (const char *text : {"-stf_bogus 1", "-stf_view maybe", "-stf_type"}) {
    ASSERT_EQ(setenv("STF_OPTIONS", text, 1), 0);
    EXPECT_EQ(stf_create(MPI_COMM_WORLD, &sf), STF_ERR_OPTION) << text;
    EXPECT_EQ(sf, nullptr);
    EXPECT_NE(std::string(stf_last_error_message()).find("STF_OPTIONS"), std::string::npos)
        << stf_last_error_message();
  }
  // STF_<NAME> variables take the same words: no is a no, maybe an error
  // (-stf_validate: an option no test here gave stf_set_options, which would win).
  unsetenv("STF_OPTIONS");
  ASSERT_EQ(setenv("STF_VALIDATE", "no", 1), 0);
  EXPECT_FALSE(effective().validate);
  ASSERT_EQ(setenv("STF_VALIDATE", "maybe", 1), 0);
  EXPECT_EQ(stf_create(MPI_COMM_WORLD, &sf), STF_ERR_OPTION);
  EXPECT_NE(std::string(stf_last_error_message()).find("STF_VALIDATE=maybe"), std::string::npos);
  unsetenv("STF_VALIDATE");
  unsetenv("STF_TWOSIDED");
}

}  // namespace
