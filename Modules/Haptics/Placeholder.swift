import TourCore
