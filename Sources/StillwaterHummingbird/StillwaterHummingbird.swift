// StillwaterHummingbird is built only with the package's `Hummingbird` trait; without it the module is empty.
#if Hummingbird
import Hummingbird
import StillwaterLive
#endif
