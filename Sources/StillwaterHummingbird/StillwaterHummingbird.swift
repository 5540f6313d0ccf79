// StillwaterHummingbird is built only with the package's `Hummingbird` trait; without it the module is
// empty. Its overview is in StillwaterHummingbird.docc.
